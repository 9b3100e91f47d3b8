/** The `workflowsPath` target: every workflow the worker registers. */
export { AsyncJobWorkflow } from './async-job-workflow';
