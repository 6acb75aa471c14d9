/** `npm start`: the whole pipeline on this machine (tools/dev/local/start.ts). */
import { main } from '../tools/dev/local/start';

void main();
