/** `npm run bench [-- pacing]`: what deduplication and pacing cost, on the local stack (tools/bench/main.ts). */
import { main } from '../tools/bench/main';

void main();
