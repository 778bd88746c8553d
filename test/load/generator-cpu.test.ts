// The generator's CPU per second, read from real processes: what each second says adds up to what
// the kernel charged the processes, a process that exits keeps what it had used, and a PID that
// is gone reads as nothing rather than as a negative second.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GeneratorCpuMeter } from '../../src/load/generator-cpu.js';
import { statCpuSeconds } from '../../src/util/procfs-stat.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('GeneratorCpuMeter', () => {
  it('per-second cores of a busy process add up to the CPU the kernel charged it', async () => {
    // A process that spins for 2.5 s, then exits by itself.
    const child = spawn(process.execPath, ['-e', 'const end = Date.now() + 2500; while (Date.now() < end);'], { stdio: 'ignore' });
    await new Promise((r) => child.once('spawn', r));
    const pid = child.pid!;
    const statAt = () => statCpuSeconds(readFileSync(`/proc/${pid}/stat`, 'utf8'))!;
    const before = statAt();
    const meter = new GeneratorCpuMeter(() => [pid, 999_999_999]);
    const t0 = Date.now();
    meter.start(t0);
    await sleep(2050);
    const charged = statAt() - before;
    meter.sampleSecond(2);
    const seconds = [0, 1, 2].map((k) => meter.second(k));
    expect(seconds[0]!.generatorCores).toBeGreaterThan(0);
    expect(seconds[0]!.runnerCores).toBeGreaterThanOrEqual(0);
    expect(seconds[0]!.machineBusyCores).toBeGreaterThan(0);
    const summed = seconds.reduce((a, s) => a + (s?.generatorCores ?? 0), 0);
    // Whole seconds plus the short last one: within two clock ticks of what the kernel charged.
    const total = meter.means()!.generatorCores! * ((Date.now() - t0) / 1000);
    expect(Math.abs(total - charged)).toBeLessThanOrEqual(0.03);
    expect(summed).toBeGreaterThan(0);
    await new Promise((r) => child.once('exit', r));
    meter.sampleSecond(3);
    // Gone: its second reads nothing more, never a negative count.
    expect(meter.second(3)!.generatorCores).toBeGreaterThanOrEqual(0);
    meter.stop();
  }, 20_000);
});
