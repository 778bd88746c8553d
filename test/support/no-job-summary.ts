// Every test project's setup: the runs tests start inside a CI job must not write into that job's
// summary or outputs (the job's own steps do that, once). A test of the summary passes its own file
// in the environment it gives the run.
delete process.env.GITHUB_STEP_SUMMARY;
delete process.env.GITHUB_OUTPUT;
