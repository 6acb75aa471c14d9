/** `npm run demo`: the duplicate-email incident replayed on the local stack (tools/local/demo.ts). */
import { main } from '../tools/local/demo';

void main();
