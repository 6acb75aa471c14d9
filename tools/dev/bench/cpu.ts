/**
 * Where the CPU goes during a throughput run (Linux /proc only): CPU time of this process and
 * of its descendants, grouped by what they are (DynamoDB Local, fauxqs, the SES emulator, the
 * consumers running the handler), plus how busy the whole machine was.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

export const CPU_ROLES = ['dynamodbLocal', 'snsSqs', 'ses', 'consumers', 'bench', 'other'] as const;
export type CpuRole = (typeof CPU_ROLES)[number];

export interface CpuSample {
  /** pid -> [role, CPU ticks (user + system)]. */
  readonly processes: ReadonlyMap<number, readonly [CpuRole, number]>;
  /** Machine-wide ticks from /proc/stat: busy and total (all cores). */
  readonly machineBusy: number;
  readonly machineTotal: number;
}

export interface CpuUse {
  /** CPU milliseconds per message, by role. */
  readonly msPerMessage: Readonly<Record<CpuRole, number>>;
  /** Share of all cores that were busy (anything on the machine). */
  readonly machineBusyShare: number;
  /** Share of all cores used by processes that are not this benchmark's: noise from elsewhere. */
  readonly othersBusyShare: number;
}

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * ppid and CPU ticks from /proc/<pid>/stat: user + system (fields 14, 15) plus those of its
 * children that have exited and been waited for (16, 17), so short-lived children still count.
 */
function statOf(pid: number): { ppid: number; ticks: number } | undefined {
  const text = read(`/proc/${pid}/stat`);
  if (!text) return undefined;
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
  return { ppid: Number(fields[1]), ticks };
}

function roleOf(pid: number, consumerBundle: string): CpuRole {
  if (pid === process.pid) return 'bench';
  const cmdline = read(`/proc/${pid}/cmdline`)?.split('\0') ?? [];
  if (cmdline.some((arg) => arg.endsWith('DynamoDBLocal.jar'))) return 'dynamodbLocal';
  const service = cmdline.findIndex((arg) => arg.endsWith('node-service.mjs'));
  if (service >= 0) return cmdline[service + 1] === 'fauxqs' ? 'snsSqs' : 'ses';
  if (cmdline.includes(consumerBundle)) return 'consumers';
  return 'other';
}

/** This process and its descendants; undefined where /proc cannot be read. */
export function sampleCpu(consumerBundle: string): CpuSample | undefined {
  const machine = read('/proc/stat')?.split('\n')[0]?.trim().split(/\s+/).slice(1).map(Number);
  if (!machine) return undefined;
  const stats = new Map<number, { ppid: number; ticks: number }>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    const stat = Number.isInteger(pid) ? statOf(pid) : undefined;
    if (stat) stats.set(pid, stat);
  }
  const ours = new Set([process.pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, stat] of stats) {
      if (!ours.has(pid) && ours.has(stat.ppid)) {
        ours.add(pid);
        grew = true;
      }
    }
  }
  const processes = new Map<number, readonly [CpuRole, number]>();
  for (const pid of ours) processes.set(pid, [roleOf(pid, consumerBundle), stats.get(pid)?.ticks ?? 0]);
  const total = machine.reduce((sum, x) => sum + x, 0);
  const idle = (machine[3] ?? 0) + (machine[4] ?? 0); // idle + iowait
  return { processes, machineBusy: total - idle, machineTotal: total };
}

export function cpuBetween(before: CpuSample, after: CpuSample, messages: number): CpuUse {
  const ticks = Object.fromEntries(CPU_ROLES.map((role) => [role, 0])) as Record<CpuRole, number>;
  for (const [pid, [role, now]] of after.processes) ticks[role] += now - (before.processes.get(pid)?.[1] ?? 0);
  const msPerTick = 1000 / clockTicks();
  const msPerMessage = Object.fromEntries(
    CPU_ROLES.map((role) => [role, Math.round(((ticks[role] * msPerTick) / messages) * 100) / 100]),
  ) as Record<CpuRole, number>;
  const machineTotal = Math.max(1, after.machineTotal - before.machineTotal);
  const busy = after.machineBusy - before.machineBusy;
  const ours = Object.values(ticks).reduce((sum, x) => sum + x, 0);
  const share = (x: number) => Math.round(Math.max(0, x / machineTotal) * 100) / 100;
  return { msPerMessage, machineBusyShare: share(busy), othersBusyShare: share(busy - ours) };
}
