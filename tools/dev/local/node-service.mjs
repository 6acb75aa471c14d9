/**
 * Runs one Node-based emulator in this process: `node node-service.mjs <fauxqs|ses> <port>`.
 *
 * - Listens on 127.0.0.1 only. Port 0 picks a free port; the port actually bound
 *   is announced on stdout as one line `@@ready {"port":<n>}`.
 * - Exits when its stdin closes: the parent holds the other end of the pipe, so
 *   this process cannot outlive it, even when the parent is killed with SIGKILL.
 * - Exits at once on SIGTERM / SIGINT / SIGHUP: the emulators keep state in memory
 *   only, there is nothing to flush.
 *
 * ESM on purpose: fauxqs is ESM-only; aws-ses-v2-local (CommonJS) imports fine from here.
 * fauxqs 2.x loads node:sqlite for its optional persistence (hence Node >= 22.5); without a
 * `dataDir`, as here, everything stays in memory as before. It also answers S3 on the same
 * port (as 1.x did), which nothing here uses.
 */
import { createRequire } from 'node:module';

const [service, portArg] = process.argv.slice(2);
const port = Number(portArg ?? '0');
const HOST = '127.0.0.1';

function exit() {
  process.exit(0);
}
process.stdin.on('end', exit);
process.stdin.on('close', exit);
process.stdin.on('error', exit);
process.stdin.resume();
process.stdout.on('error', exit);
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  process.on(signal, exit);
}

/**
 * The largest request body fauxqs's S3 takes: its own limit is 11 MiB (a multipart part), under
 * the contract's 25 MiB of files in one object; S3 takes up to 5 GB in one PutObject.
 */
const S3_BODY_LIMIT_BYTES = Number(process.env.FAUXQS_S3_BODY_LIMIT_BYTES || 40 * 1024 * 1024);

async function startFauxqs() {
  // buildApp + listen instead of startFauxqs(): startFauxqs always binds 0.0.0.0.
  const { buildApp } = await import('fauxqs');
  const app = buildApp({ logger: false, defaultRegion: process.env.AWS_REGION || 'us-east-1' });
  // fauxqs has no option for it: its S3 bodies go through the wildcard parser, replaced here by the
  // same parser with a larger limit (SNS and SQS keep their own parsers and size checks).
  app.removeContentTypeParser('*');
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: S3_BODY_LIMIT_BYTES }, (_req, body, done) => {
    done(null, body);
  });
  await app.listen({ port, host: HOST });
  return app.server.address().port;
}

/**
 * The largest request aws-ses-v2-local parses: its own is 25 MB, under an email with the
 * contract's 25 MiB of files (about 36 MB once base64-encoded); SES takes 40 MB per message, and
 * the layer in front (ses-content.ts) refuses what is over that, as SES does.
 */
const SES_BODY_LIMIT = process.env.SES_BODY_LIMIT || '48mb';

async function startSes() {
  // aws-ses-v2-local has no option for it: its express.json / urlencoded get the larger limit.
  const require = createRequire(createRequire(import.meta.url).resolve('aws-ses-v2-local'));
  const express = require('express');
  for (const name of ['json', 'urlencoded']) {
    const parser = express[name];
    express[name] = (options = {}) => parser({ ...options, limit: SES_BODY_LIMIT });
  }
  const imported = await import('aws-ses-v2-local');
  const server = typeof imported.default === 'function' ? imported.default : imported.default.default;
  const httpServer = await server({ host: HOST, port });
  // Its listen callback also runs on a listen error (and then resolves): no address means it failed.
  const address = httpServer.address();
  if (address === null || typeof address === 'string') {
    throw new Error(`aws-ses-v2-local could not listen on ${HOST}:${port} (port in use?)`);
  }
  return address.port;
}

const starters = { fauxqs: startFauxqs, ses: startSes };
const start = starters[service];
if (!start || !Number.isInteger(port) || port < 0) {
  process.stderr.write(`node-service: usage: node node-service.mjs <${Object.keys(starters).join('|')}> <port>\n`);
  process.exit(2);
}

start().then(
  (boundPort) => process.stdout.write(`@@ready ${JSON.stringify({ port: boundPort })}\n`),
  (error) => {
    process.stderr.write(`node-service: ${service} failed to start: ${error && error.stack ? error.stack : error}\n`);
    process.exit(1);
  },
);
