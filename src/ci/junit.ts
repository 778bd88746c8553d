// JUnit XML for CI test-result views: one testsuite per variant, one testcase per expectation and per
// baseline figure. Failures carry the sentence a person needs; inconclusive expectations are skipped
// with their reason; a variant that did not run is an error; rules dropped before the run (their
// variant not run) are skipped cases in a suite of their own.
import type { RunResults, VariantResult } from '../contract/index.js';
import type { BaselineComparison, BaselineFigure } from './baseline.js';
import { changeText } from './baseline-table.js';
import { provenanceOf } from './provenance.js';

export interface JUnitRun {
  results: RunResults;
  baseline?: BaselineComparison | null;
  /** Shown in the suites' properties so a CI reader can find the folder. */
  runDir?: string;
}

// XML 1.0 allows tab, LF, CR and everything from U+0020 except the surrogates and U+FFFE/FFFF.
// eslint-disable-next-line no-control-regex -- the control characters XML forbids are what it matches
const INVALID_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function xmlEscape(value: unknown): string {
  return String(value)
    .replace(INVALID_XML, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;')
    .replace(/\n/g, '&#10;')
    .replace(/\r/g, '&#13;')
    .replace(/\t/g, '&#9;');
}

/** Element text: like attributes, but line breaks stay readable. */
function xmlText(value: unknown): string {
  return String(value).replace(INVALID_XML, '\uFFFD').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

interface Case {
  name: string;
  classname: string;
  outcome: { kind: 'pass' } | { kind: 'failure' | 'error' | 'skipped'; message: string; type: string; detail: string };
  out?: string;
}

function expectationCases(scenario: string, v: VariantResult): Case[] {
  const classname = `${scenario}.${v.name}`;
  if (v.error !== undefined) {
    return [{ name: 'variant ran', classname, outcome: { kind: 'error', type: 'run-error', message: `${v.name} did not run: ${v.error}`, detail: v.error } }];
  }
  return v.expectations.map((e) => {
    const name = `expectation ${e.name}`;
    const detail = `expected ${JSON.stringify(e.expected)}, measured ${JSON.stringify(e.actual)} (${e.basis})\n${e.message}`;
    if (e.verdict === 'failed')
      return { name, classname, outcome: { kind: 'failure', type: 'expectation-failed', message: `${v.name}: ${e.message}`, detail } };
    if (e.verdict === 'inconclusive') {
      return { name, classname, outcome: { kind: 'skipped', type: 'inconclusive', message: `inconclusive: ${e.message}`, detail } };
    }
    return { name, classname, outcome: { kind: 'pass' }, out: e.message };
  });
}

/** "disabled.oomKilled (variant not run)" → a skipped case of the variant's class, the reason its message. */
function droppedCase(scenario: string, dropped: string): Case {
  const m = /^([^.\s]+)\.(\S+) \((.*)\)$/.exec(dropped);
  const [variant, rule, why] = m ? [m[1]!, m[2]!, m[3]!] : ['run', dropped, 'dropped'];
  return {
    name: `expectation ${rule}`,
    classname: `${scenario}.${variant}`,
    outcome: { kind: 'skipped', type: 'not-judged', message: `not judged: ${why}`, detail: dropped },
  };
}

function baselineCase(scenario: string, f: BaselineFigure, cmp: BaselineComparison): Case {
  const classname = `${scenario}.${f.variant}`;
  const name = `baseline ${f.figure}`;
  const summary = `${f.label} ${changeText(f)} against ${cmp.from} (tolerance ${f.tolerance}): ${f.rule}`;
  const detail = `${summary}${f.flag ? `\n${f.flag}` : ''}\nrule: ${cmp.rule}`;
  if (f.verdict === 'regressed')
    return { name, classname, outcome: { kind: 'failure', type: 'baseline-regression', message: `${f.variant}: ${f.label} regressed: ${summary}`, detail } };
  return { name, classname, out: `${f.verdict}: ${summary}${f.flag ? ` (${f.flag})` : ''}`, outcome: { kind: 'pass' } };
}

function renderCase(c: Case): string {
  const open = `    <testcase name="${xmlEscape(c.name)}" classname="${xmlEscape(c.classname)}" time="0"`;
  const inner: string[] = [];
  if (c.outcome.kind !== 'pass') {
    const o = c.outcome;
    inner.push(`      <${o.kind} message="${xmlEscape(o.message)}" type="${xmlEscape(o.type)}">${xmlText(o.detail)}</${o.kind}>`);
  }
  if (c.out) inner.push(`      <system-out>${xmlText(c.out)}</system-out>`);
  return inner.length === 0 ? `${open}/>` : `${open}>\n${inner.join('\n')}\n    </testcase>`;
}

function seconds(r: RunResults): number {
  if (!r.endedAt) return 0;
  const s = (Date.parse(r.endedAt) - Date.parse(r.startedAt)) / 1000;
  return Number.isFinite(s) && s > 0 ? s : 0;
}

/** The whole document for one or several runs (several scenarios in one `attestorm run`). */
export function renderJUnit(runs: JUnitRun[]): string {
  const suites: string[] = [];
  let tests = 0;
  let failures = 0;
  let errors = 0;
  let skipped = 0;
  for (const run of runs) {
    const r = run.results;
    const scenario = r.scenario.name;
    const props: [string, unknown][] = [
      ['scenario', scenario],
      ['status', r.status],
      ['verdict', r.verdict],
      ['tool', `${r.tool.name} ${r.tool.version}`],
      ['startedAt', r.startedAt],
    ];
    if (run.runDir) props.push(['runDir', run.runDir]);
    const commit = provenanceOf(r)?.git?.commit;
    if (typeof commit === 'string') props.push(['commit', commit]);
    if (run.baseline) props.push(['baseline', run.baseline.from]);
    const notes = run.baseline?.notes ?? [];
    for (const v of r.variants) {
      const cases = expectationCases(scenario, v);
      for (const f of run.baseline?.figures ?? []) if (f.variant === v.name) cases.push(baselineCase(scenario, f, run.baseline!));
      const count = (k: string) => cases.filter((c) => c.outcome.kind === k).length;
      const vProps = [...props, ['agent', [v.agent.kind, v.agent.version ?? '', v.agent.placement ?? ''].filter(Boolean).join(' ')] as [string, unknown]];
      const propXml = vProps.map(([k, val]) => `      <property name="${xmlEscape(k)}" value="${xmlEscape(val)}"/>`).join('\n');
      const vNotes = notes.filter((n) => n.startsWith(`variant ${v.name}:`) || !n.startsWith('variant '));
      suites.push(
        [
          `  <testsuite name="${xmlEscape(`${scenario}.${v.name}`)}" tests="${cases.length}" failures="${count('failure')}" errors="${count('error')}" skipped="${count('skipped')}" time="${(seconds(r) / Math.max(1, r.variants.length)).toFixed(3)}" timestamp="${xmlEscape(r.startedAt)}">`,
          `    <properties>\n${propXml}\n    </properties>`,
          ...cases.map(renderCase),
          ...(vNotes.length > 0 ? [`    <system-out>${xmlText(vNotes.map((n) => `note: ${n}`).join('\n'))}</system-out>`] : []),
          '  </testsuite>',
        ].join('\n'),
      );
      tests += cases.length;
      failures += count('failure');
      errors += count('error');
      skipped += count('skipped');
    }
    // Rules dropped before the run (their variant not run) are skipped cases with the reason, not absent.
    const dropped = r.droppedExpectations.map((d) => droppedCase(scenario, d));
    if (dropped.length) {
      const propXml = props.map(([k, val]) => `      <property name="${xmlEscape(k)}" value="${xmlEscape(val)}"/>`).join('\n');
      suites.push(
        [
          `  <testsuite name="${xmlEscape(`${scenario}.not-run`)}" tests="${dropped.length}" failures="0" errors="0" skipped="${dropped.length}" time="0" timestamp="${xmlEscape(r.startedAt)}">`,
          `    <properties>\n${propXml}\n    </properties>`,
          ...dropped.map(renderCase),
          '  </testsuite>',
        ].join('\n'),
      );
      tests += dropped.length;
      skipped += dropped.length;
    }
  }
  const name = `attestorm ${runs.map((r) => r.results.scenario.name).join(', ')}`;
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="${xmlEscape(name)}" tests="${tests}" failures="${failures}" errors="${errors}" skipped="${skipped}">\n${suites.join('\n')}\n</testsuites>\n`;
}
