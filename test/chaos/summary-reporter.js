/**
 * Jest reporter of the chaos suite: after the run, reads the figures each scenario left in
 * .local/chaos/results/ (see harness.ts), prints one compact table and writes the same as
 * .local/chaos-report.md, with the machine, the date, the command and the run time.
 * Plain JavaScript: jest loads reporters without the ts-jest transform.
 */
const { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const COLUMNS = [
  'scenario',
  'pods',
  'published (unique)',
  'deliveries',
  'decisions',
  'emails sent',
  'duplicates',
  'lost',
  'dead-lettered, by reason',
  'ambiguous events',
  'max receive',
  'time',
];

function byName(counts) {
  const entries = Object.entries(counts ?? {}).filter(([, n]) => n > 0);
  return entries.length === 0 ? '0' : entries.map(([name, n]) => `${name} ${n}`).join(', ');
}

function row(r) {
  const dead = Object.values(r.deadLettered).reduce((a, b) => a + b, 0);
  const ambiguous = Object.values(r.ambiguousEvents).reduce((a, b) => a + b, 0);
  return [
    r.scenario,
    r.consumers,
    r.published,
    r.deliveries,
    r.decisions,
    r.emailsSent,
    r.duplicates,
    r.lost,
    dead === 0 ? '0' : `${dead} (${byName(r.deadLettered)})`,
    ambiguous === 0 ? '0' : `${ambiguous} (${byName(r.ambiguousEvents)})`,
    r.maxReceiveCount,
    `${(r.durationMs / 1000).toFixed(1)} s`,
  ];
}

function table(rows) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(COLUMNS), line(COLUMNS.map(() => '---')), ...rows.map((r) => line(row(r)))].join('\n');
}

class ChaosSummaryReporter {
  constructor(globalConfig) {
    this.root = globalConfig.rootDir;
    this.resultsDir = path.join(this.root, '.local', 'chaos', 'results');
  }

  onRunStart() {
    rmSync(this.resultsDir, { recursive: true, force: true });
  }

  onRunComplete(_contexts, results) {
    const files = existsSync(this.resultsDir) ? readdirSync(this.resultsDir).filter((f) => f.endsWith('.json')) : [];
    const scenarios = files
      .map((f) => JSON.parse(readFileSync(path.join(this.resultsDir, f), 'utf8')))
      .sort((a, b) => a.order - b.order);
    if (scenarios.length === 0) return;
    const seconds = ((Date.now() - results.startTime) / 1000).toFixed(0);
    const cpus = os.cpus();
    const lines = [
      '# Chaos suite',
      '',
      `${new Date().toISOString().slice(0, 10)}, \`npm run test:chaos\` (jest -c jest.chaos.config.js, in band), ` +
        `${results.numPassedTests} passed, ${results.numFailedTests} failed, whole run ${seconds} s.`,
      `Machine: ${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown'}), ` +
        `${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.versions.node}, ${os.platform()} ${os.release()}. ` +
        `Local stack: DynamoDB Local, fauxqs, aws-ses-v2-local. Fault schedule seed: ${scenarios[0].seed} (CHAOS_SEED).`,
      '',
      table(scenarios),
      '',
      'Faults injected:',
      ...scenarios.map((r) => {
        const late =
          r.invocationTimeouts > 0 ? [`${r.invocationTimeouts} invocation(s) ran past the function timeout`] : [];
        return `- ${r.scenario}: ${[...r.faults, ...late].join('; ') || 'none'}`;
      }),
    ];
    const duplicates = scenarios.filter((r) => r.duplicateLog.length > 0);
    if (duplicates.length > 0) {
      lines.push(
        '',
        'Duplicates, by the ambiguous event each is attributed to (dedupe keys; details in .local/chaos/results/):',
      );
      for (const r of duplicates) {
        const byCause = new Map();
        for (const d of r.duplicateLog) byCause.set(d.cause, [...(byCause.get(d.cause) ?? []), `\`${d.key}\``]);
        for (const [cause, keys] of byCause)
          lines.push(`- ${r.scenario}, ${cause} (${keys.length}): ${keys.join(', ')}`);
      }
    }
    const problems = scenarios.flatMap((r) => r.problems.map((p) => `${r.scenario}: ${p}`));
    if (problems.length > 0) lines.push('', 'PROBLEMS:', ...problems.map((p) => `- ${p}`));
    const text = `${lines.join('\n')}\n`;
    process.stdout.write(`\n${text}\n`);
    mkdirSync(path.join(this.root, '.local'), { recursive: true });
    writeFileSync(path.join(this.root, '.local', 'chaos-report.md'), text);
  }
}

module.exports = ChaosSummaryReporter;
