/** `npm start`: the whole pipeline on this machine (tools/local/start.ts). */
import { main } from '../tools/local/start';

void main();
