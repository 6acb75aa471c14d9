/**
 * A local consumer dies above the function's memory, as Lambda ends the container: once, after
 * saying how much it held.
 */
import { watchMemory } from '../../../../../tools/dev/local/memory-watch';
import { sleep } from '../../../helpers';

const MB = 1024 * 1024;
// A few of the watch's 1 ms intervals, in real time.
const tick = () => sleep(5);

describe('memory watch', () => {
  test('above the limit it reports and kills, once', async () => {
    let rss = 100 * MB;
    const reports: number[] = [];
    let kills = 0;
    const watch = watchMemory({
      limitMb: 256,
      intervalMs: 1,
      rss: () => rss,
      onExceeded: (rssMb) => reports.push(rssMb),
      kill: () => (kills += 1),
    });
    await tick();
    expect(kills).toBe(0);
    rss = 300 * MB;
    await tick();
    await tick();
    expect(reports).toEqual([300]);
    expect(kills).toBe(1);
    expect(watch.peakMb()).toBe(300);
    watch.stop();
  });

  test('at or under the limit nothing happens, and the peak is kept', async () => {
    const samples = [120, 256, 180];
    let kills = 0;
    const watch = watchMemory({
      limitMb: 256,
      intervalMs: 1,
      rss: () => (samples.shift() ?? 180) * MB,
      onExceeded: () => undefined,
      kill: () => (kills += 1),
    });
    await tick();
    await tick();
    watch.stop();
    expect(kills).toBe(0);
    expect(watch.peakMb()).toBe(256);
  });
});
