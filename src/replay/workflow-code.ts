/**
 * The workflow code `asyncjob replay-check` replays against: a bundle written by `asyncjob bundle` (held to the
 * same check a worker's ASYNCJOB_WORKFLOW_BUNDLE is, so it is the code the workers of this install will run), or
 * this install's workflows, bundled as a worker bundles them at start (seconds of CPU).
 */
import path from 'node:path';
import type { Logger } from '@temporalio/common';
import { bundleWorkflowCode } from '@temporalio/worker';
import { asyncjobVersion, checkWorkflowBundle, WORKFLOW_BUNDLER_OPTIONS, workflowsPath } from '../workflow-bundle';
import type { ReplayWorkflowCode } from './replay-check';

/** The workflow code, and what to call it in a report. */
export interface WorkflowCode {
  code: ReplayWorkflowCode;
  /** The bundle file (absolute), or null for this install's workflows. */
  bundle: string | null;
  /** The asyncjob version the code is of. */
  asyncjob: string;
}

/**
 * The bundle FILE as replay code, or why not: one line naming `--bundle`, the reason the worker's check gives,
 * and the remedy. The check is the worker's own; only its wording of the variable and remedy is replaced.
 */
export async function bundledWorkflowCode(file: string): Promise<WorkflowCode | { problem: string }> {
  const checked = await checkWorkflowBundle(file);
  if ('problem' in checked) {
    const why = /^ASYNCJOB_WORKFLOW_BUNDLE: (.*); write it with /s.exec(checked.problem)?.[1] ?? checked.problem;
    return {
      problem: `--bundle: ${why}; write it with "asyncjob bundle --out ${file}" in this install, or leave --bundle out to check this install's workflows`,
    };
  }
  return { code: { codePath: path.resolve(file) }, bundle: path.resolve(file), asyncjob: checked.stamp.asyncjob };
}

/** This install's workflows, bundled now (webpack's report dropped; its warnings and errors to `logger`). */
export async function installedWorkflowCode(logger: Logger): Promise<WorkflowCode> {
  const { code } = await bundleWorkflowCode({ workflowsPath, ...WORKFLOW_BUNDLER_OPTIONS, logger });
  return { code: { code }, bundle: null, asyncjob: asyncjobVersion() };
}
