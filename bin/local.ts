/** `npm start`: the whole pipeline on this machine (tools/local/start.ts). */
import '../tools/local/quiet';
import { main } from '../tools/local/start';

void main();
