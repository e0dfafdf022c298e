import type { DeployedFunction, Instance } from '../helpers/deployed.js';
import { mcpEvent } from '../helpers/lambda-bundle.js';
import { createTestWorkspace } from '../helpers/workspace-fixtures.js';

/**
 * What every tool the deployed function lists costs in DynamoDB, one call each: requests, read and
 * write units (as the store reports them through test/helpers/capacity-proxy.ts), on a warm
 * instance with a warm credential, the limits on. The tools come from the function's own
 * `tools/list`, their arguments from each input schema, so a tool added tomorrow gets its row without
 * a change here. Ids a tool needs (a task, a project, a comment, a member, a change to undo) are made
 * fresh for each call by uncounted calls first, so a tool that deletes gets something of its own.
 */
export interface ToolCost {
  readonly tool: string;
  /** The arguments it was called with. */
  readonly args: Record<string, unknown>;
  /** Empty when it succeeded; else what it answered. */
  readonly refused: string;
  readonly ops: readonly string[];
  readonly read: number;
  readonly write: number;
  /** Write units of the limits table (admission and release); `write` includes them. */
  readonly limitsWrite: number;
  /** Whether every request's answer carried its consumed capacity. */
  readonly reported: boolean;
}

interface JsonSchema {
  readonly type?: string | string[];
  readonly properties?: Record<string, JsonSchema>;
  readonly required?: readonly string[];
  readonly items?: JsonSchema;
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly anyOf?: readonly JsonSchema[];
  readonly oneOf?: readonly JsonSchema[];
  readonly format?: string;
  readonly pattern?: string;
  readonly minimum?: number;
  readonly minItems?: number;
  readonly default?: unknown;
}

type Fixtures = Record<'taskId' | 'projectId' | 'commentId' | 'userId' | 'activityId', string>;

const today = () => new Date().toISOString().slice(0, 10);
let unique = 0;

/** A value for a property: the fixture its name calls for, else the simplest value its schema allows. */
const valueFor = (name: string, schema: JsonSchema, fx: Fixtures): unknown => {
  if (name in fx) return fx[name as keyof Fixtures];
  if (name === 'version') return 1;
  if (name === 'email') return `bench-${Date.now()}-${unique++}@example.test`;
  if (/Ids$/.test(name)) {
    const one = name.replace(/s$/, '');
    if (one in fx) return [fx[one as keyof Fixtures]];
  }
  return synthesize(schema, fx, name);
};

/** Optional fields an update is given, so it changes something (an update with none is refused). */
const CHANGES = ['title', 'name', 'description'];

const synthesize = (schema: JsonSchema, fx: Fixtures, name = ''): unknown => {
  if (schema.const !== undefined) return schema.const;
  // The last choice: for a role the least privileged (no owners' lock), for a priority the lowest.
  if (schema.enum?.length) return schema.enum.at(-1);
  const alternative = schema.anyOf?.[0] ?? schema.oneOf?.[0];
  if (alternative) return synthesize(alternative, fx, name);
  const type = [schema.type].flat()[0];
  if (type === 'object' || schema.properties) {
    const out: Record<string, unknown> = {};
    const required = schema.required ?? [];
    for (const key of required) out[key] = valueFor(key, schema.properties?.[key] ?? {}, fx);
    // Something to change on what the object names by id (a task, a project), unless it is a new one.
    const names = required.some((k) => k === 'taskId' || k === 'projectId');
    const change = CHANGES.find((k) => schema.properties?.[k] && !required.includes(k));
    if (names && change) out[change] = valueFor(change, schema.properties![change]!, fx);
    return out;
  }
  if (type === 'array') return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => synthesize(schema.items ?? {}, fx, name));
  if (type === 'integer' || type === 'number') return schema.minimum ?? 1;
  if (type === 'boolean') return false;
  if (schema.format === 'date' || /date/i.test(name) || schema.pattern?.includes('\\d{4}')) return today();
  return `Bench ${name || 'value'} ${unique++}`;
};

export const measureToolCosts = async (fn: DeployedFunction): Promise<ToolCost[]> => {
  const units = fn.units;
  if (!units) throw new Error('measureToolCosts needs startDeployedFunction({ units: true })');
  const ws = await createTestWorkspace(fn.server);
  // The template's environment, with a credential cache that outlasts the run (so each call finds it
  // warm, as one within DOERS_AUTH_CACHE_SECONDS of the last does) and a rate limit it cannot reach.
  const instance: Instance = await fn.startInstance({ DOERS_AUTH_CACHE_SECONDS: '300', DOERS_RATE_LIMIT_CALLS: '1000000' });
  const host = new URL(fn.server.url).host;
  const send = async (method: string, params: Record<string, unknown>) => {
    const { res } = await instance.invoke(mcpEvent(ws.owner.token, method, params, { host }));
    return JSON.parse(res.body) as { result?: any; error?: { message: string } };
  };
  const tool = async (name: string, args: Record<string, unknown>) => {
    const out = await send('tools/call', { name, arguments: args });
    if (out.error || out.result?.isError) throw new Error(`${name} (fixture): ${JSON.stringify(out.error ?? out.result.content)}`);
    return out.result.structuredContent;
  };
  const limitsTable = fn.server.app.config.tables.limits;
  /** One counted call; the fixtures before it are not counted. */
  const measure = async (label: string, name: string, args: Record<string, unknown>): Promise<ToolCost & { result?: any }> => {
    units.consumed.length = 0;
    const out = await send('tools/call', { name, arguments: args });
    const consumed = [...units.consumed];
    return {
      tool: label,
      args,
      refused: out.error ? out.error.message : out.result?.isError ? String(out.result.content?.[0]?.text ?? 'isError') : '',
      ops: consumed.map((c) => c.operation),
      read: consumed.reduce((s, c) => s + c.read, 0),
      write: consumed.reduce((s, c) => s + c.write, 0),
      limitsWrite: consumed.reduce((s, c) => s + (c.tables[limitsTable]?.write ?? 0), 0),
      reported: consumed.every((c) => c.reported),
      result: out.result?.structuredContent,
    };
  };
  const listed = (await send('tools/list', {})).result.tools as { name: string; inputSchema: JsonSchema }[];

  const rows: ToolCost[] = [];
  for (const { name, inputSchema } of [...listed].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    // The project named to a tool holds no task (so it can be deleted); the task is in another one.
    const project = await tool('project_create', { name: `Bench project ${unique++}` });
    const home = await tool('project_create', { name: `Bench home ${unique++}` });
    const task = await tool('task_create', {
      title: `Bench task ${unique++}`,
      projectId: home.projectId,
      assignee: 'me',
      dueDate: today(),
    });
    const comment = await tool('comment_add', { taskId: task.taskId, body: 'A bench comment' });
    const change = await tool('task_update', { taskId: task.taskId, version: 1, priority: 'P2' });
    const member = await tool('member_invite', {
      email: `bench-${Date.now()}-${unique++}@example.test`,
      name: 'Bench Person',
      role: 'member',
    });
    // Reopening needs a done task.
    if (name.endsWith('_reopen')) await tool('task_complete', { taskId: task.taskId });
    // The fixtures changed the directory: this call reads it again, so the measured one does not.
    await tool('tasks_search', { limit: 1 });
    const fx: Fixtures = {
      taskId: task.taskId,
      projectId: project.projectId,
      commentId: comment.commentId,
      userId: member.userId,
      activityId: change.activityId,
    };
    const args = synthesize(inputSchema, fx) as Record<string, unknown>;
    // The task is at version 2 after its update (3 once completed), the project at 1.
    const taskVersion = name.endsWith('_reopen') ? 3 : 2;
    const versions = (o: Record<string, unknown>) => {
      if ('version' in o) o.version = 'taskId' in o ? taskVersion : 1;
    };
    versions(args);
    for (const v of Object.values(args)) if (Array.isArray(v)) for (const item of v) if (item && typeof item === 'object') versions(item);

    rows.push(await measure(name, name, args));
  }
  // The bulk tools at their size: fifty new tasks, then a change to each of them.
  const fifty = Array.from({ length: 50 }, (_, i) => ({ title: `Bench bulk ${i + 1}`, priority: 'P3', dueDate: today() }));
  const created = await measure('tasks_create ×50', 'tasks_create', { tasks: fifty });
  rows.push(created);
  const keys = (created.result?.items ?? []).map((i: { key: string }) => i.key);
  rows.push(
    await measure('tasks_update ×50', 'tasks_update', { tasks: keys.map((key: string) => ({ taskId: key, version: 1, priority: 'P2' })) }),
  );
  instance.close();
  return rows;
};
