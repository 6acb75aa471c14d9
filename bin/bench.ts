/** `npm run bench [-- pacing]`: what deduplication and pacing cost, on the local stack (tools/dev/bench/main.ts). */
import { main } from '../tools/dev/bench/main';

void main();
