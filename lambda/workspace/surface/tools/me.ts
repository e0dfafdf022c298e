import * as z from 'zod/mini';
import { ROLES, SCOPES } from '../../../vocabulary.js';
import { dateInZone } from '../../model/time.js';
import { defineTool } from '../define-tool.js';
import { dateOut } from '../schemas.js';
import { READ } from './annotations.js';

const meOutput = z.object({
  userId: z.string(),
  name: z.string(),
  email: z.string(),
  workspace: z.object({ workspaceId: z.string(), name: z.string(), key: z.string().check(z.describe('Task keys are KEY-<number>')) }),
  role: z.enum(ROLES),
  timeZone: z.string(),
  today: dateOut.check(z.describe("Today's date in the user's time zone")),
  now: z.iso.datetime({ offset: true }),
  scopes: z.array(z.enum(SCOPES)),
});

export const meGet = defineTool({
  name: 'me_get',
  title: 'Who am I',
  description: "The calling user: name, e-mail, workspace and its task key, role, time zone, today there, and the token's scopes.",
  input: z.strictObject({}),
  output: meOutput,
  // The scopes as strings: which there are, the protected-resource metadata lists (scopes_supported).
  listedOutput: z.extend(meOutput, { scopes: z.array(z.string()) }),
  annotations: READ,
  scope: null,
  run: async (_args, { principal, now }) => ({
    userId: principal.userId,
    name: principal.name,
    email: principal.email,
    workspace: { workspaceId: principal.workspaceId, name: principal.workspaceName, key: principal.workspaceKey },
    role: principal.role,
    timeZone: principal.timeZone,
    today: dateInZone(now, principal.timeZone),
    now: now.toISOString(),
    scopes: [...principal.scopes],
  }),
  render: (me) =>
    `${me.name} <${me.email}> [${me.userId}] · ${me.role} of ${me.workspace.name} [${me.workspace.workspaceId}], task keys ${me.workspace.key}-<number>\n` +
    `Time zone ${me.timeZone}, today is ${me.today}.\nScopes: ${me.scopes.length ? me.scopes.join(', ') : 'none'}`,
});
