/**
 * Preloaded into every process `npm start` runs when the soak counts DynamoDB requests
 * (tools/dev/bench/soak.ts --count-requests): counts each HTTP request that carries a DynamoDB
 * `x-amz-target`, by operation and table, and writes the counts of its process to
 * `<SOAK_COUNT_DIR>/<pid>.json` every second (the soak stops npm start with a signal, so a
 * count written at exit could be lost). The consumer's name (CONSUMER_NAME) says whose they are.
 */
'use strict';
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');

const dir = process.env.SOAK_COUNT_DIR;
if (dir) {
  const counts = {};
  const counted = new WeakSet();
  const note = (request, chunk) => {
    if (counted.has(request)) return;
    const target = request.getHeader('x-amz-target');
    if (typeof target !== 'string' || !target.startsWith('DynamoDB')) return;
    counted.add(request);
    const body = typeof chunk === 'string' || Buffer.isBuffer(chunk) ? String(chunk) : '';
    const table = /"TableName":"([^"]+)"/.exec(body)?.[1] ?? '(several)';
    const name = `${target.split('.')[1]} ${table}`;
    counts[name] = (counts[name] ?? 0) + 1;
  };
  // Every SDK request, http or https, is a ClientRequest whose body is written by write() or end().
  const { write, end } = http.ClientRequest.prototype;
  http.ClientRequest.prototype.write = function (chunk, ...rest) {
    note(this, chunk);
    return write.call(this, chunk, ...rest);
  };
  http.ClientRequest.prototype.end = function (chunk, ...rest) {
    note(this, chunk);
    return end.call(this, chunk, ...rest);
  };
  const file = path.join(dir, `${process.pid}.json`);
  const who = process.env.CONSUMER_NAME ?? path.basename(process.argv[1] ?? 'node');
  const save = () => {
    if (Object.keys(counts).length > 0) fs.writeFileSync(file, JSON.stringify({ who, counts }));
  };
  setInterval(save, 1000).unref();
  process.on('exit', save);
}
