/** The construct loads pre-built handlers (lib/construct/assets.ts): build them from the current sources once per run. */
import { buildAssets } from '../../tools/build/build';

export default async function globalSetup(): Promise<void> {
  await buildAssets();
}
