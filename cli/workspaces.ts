import type { Status } from '../lambda/vocabulary.js';
import { type Command, workspaceOf } from './args.js';
import { CliError } from './errors.js';

/** A whole workspace switched off (every member refused) and on again. */
const workspaceStatus = (status: Status): Command => ({
  options: ['workspace'],
  async run(o, target, out) {
    const workspaceId = workspaceOf(o.workspace, target);
    if (!(await target.directory.setWorkspaceStatus(workspaceId, status))) {
      throw new CliError(`--workspace: no workspace ${workspaceId} in ${target.where}`);
    }
    out.stdout(`Workspace ${workspaceId} is ${status}.`);
  },
});

export const WORKSPACE_COMMANDS: Readonly<Record<string, Command>> = {
  'workspace disable': workspaceStatus('disabled'),
  'workspace enable': workspaceStatus('active'),
};
