import { lstatSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { linkLatest } from '../../src/scenario/index.js';

const dir = mkdtempSync(join(tmpdir(), 'attestorm-folder-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('reports/latest', () => {
  it('is updated only in the reports folder; a latest link elsewhere is left alone', () => {
    const reports = join(dir, 'reports');
    mkdirSync(join(reports, 'run-a'), { recursive: true });
    linkLatest(join(reports, 'run-a'), reports);
    expect(readlinkSync(join(reports, 'latest'))).toBe('run-a');

    // `--out /tmp/q`: the user's own /tmp/latest must survive.
    const other = join(dir, 'tmp');
    mkdirSync(join(other, 'q'), { recursive: true });
    symlinkSync('somewhere-else', join(other, 'latest'));
    linkLatest(join(other, 'q'), reports);
    expect(readlinkSync(join(other, 'latest'))).toBe('somewhere-else');
    expect(lstatSync(join(reports, 'latest')).isSymbolicLink()).toBe(true);
  });
});
