// CI-native results: the baseline regression gate, JUnit XML, job summaries, provenance and the
// history report. The only surface other folders use.
export {
  compareWithBaseline,
  checkBaselineCompatible,
  agentDifference,
  RULE as BASELINE_RULE,
  type BaselineComparison,
  type BaselineFigure,
  type FigureVerdict,
} from './baseline.js';
export { baselineTableText, baselineTableMarkdown, baselineTableHtml } from './baseline-table.js';
export { FIGURES, FIGURE_IDS, bystandersOf, type FigureId } from './figures.js';
export { parseTolerances, TOLERANCE_HELP, type Tolerances } from './tolerance.js';
export { readResultsFile, type ResultsFile } from './results-file.js';
export { renderJUnit, xmlEscape, type JUnitRun } from './junit.js';
export { renderStepSummary, appendStepSummary, fitMarkdown, shownPath, STEP_SUMMARY_LIMIT } from './step-summary.js';
export { collectProvenance, provenanceOf, scenarioHash, canonicalJson, gitProvenance, type Provenance, type ProvenanceOptions } from './provenance.js';
export { CiSession, type CiFlags, type FinishedRun } from './ci-session.js';
export { loadHistory, findRunFolders, gateFailed, type HistoryModel, type HistoryRun, type HistoryOptions } from './history.js';
export { renderHistoryHtml, writeHistory } from './history-html.js';
export { compareRunFolders, type FolderComparison } from './compare-folders.js';
export { baselineSection, baselineSectionsOf } from './baseline-section.js';
export { renderPrComment, commentOnRun, commentMarker, COMMENT_LIMIT, type PrCommentInput, type CommentOptions } from './pr-comment.js';
