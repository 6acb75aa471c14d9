/** `npm run demo`: the duplicate-email incident replayed on the local stack (tools/dev/local/demo.ts). */
import { main } from '../tools/dev/local/demo';

void main();
