import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '../../platform/dynamodb.js';
import { wsPk } from '../../platform/item-keys.js';

/**
 * Long work a tool call started and a worker does (workspace_import, workspace_export): one item per
 * job in its workspace's job partition (`WS#<ws>#JOB`), written by the call before it answers (the
 * task's handle must find it at once) and then only by the worker, each change conditional on the
 * job still working, so a finished job never changes again. The item expires with the table's TTL
 * a day after it was made (docs/workspace.md, "Long work").
 */

export type JobStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
/** The tool that started it (workspace_import, workspace_export; the conformance fixtures' own). */
export type JobTool = string;
/** What a job asks its client for while it waits (the tasks extension's `inputRequests`), by key. */
export type JobInputRequests = Readonly<Record<string, { readonly method: string; readonly params?: Record<string, unknown> }>>;

/** How long a job (and its result) is kept after it was made. */
export const JOB_TTL_MS = 24 * 60 * 60_000;

export interface Job {
  readonly workspaceId: string;
  readonly jobId: string;
  /** Who started it: only they may read or cancel it. */
  readonly userId: string;
  readonly tool: JobTool;
  /** The call's arguments as read, and what the worker needs of the call (its client). */
  readonly input: Readonly<Record<string, unknown>>;
  readonly status: JobStatus;
  readonly statusMessage?: string;
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  /** When a worker took it up (until then it waits in the queue, however long). */
  readonly startedAt?: string;
  /** Asked to stop (tasks/cancel); the worker stops at its next step. */
  readonly cancel?: boolean;
  /** While `input_required`: what it still waits for. */
  readonly inputRequests?: JobInputRequests;
  /** The answers given so far (tasks/update), by the key of what they answer. */
  readonly inputResponses?: Readonly<Record<string, unknown>>;
  /** The tool's result (CallToolResult) as JSON, once completed. */
  readonly result?: string;
  /** The JSON-RPC error, once failed. */
  readonly error?: { readonly code: number; readonly message: string };
}

/** An end the worker writes: completed with the tool's result, failed with an error, or cancelled. */
export type JobEnd =
  | { readonly status: 'completed'; readonly statusMessage: string; readonly result: Record<string, unknown> }
  | { readonly status: 'failed'; readonly statusMessage: string; readonly error: { code: number; message: string } }
  | { readonly status: 'cancelled'; readonly statusMessage: string; readonly result?: Record<string, unknown> };

const jobPk = (workspaceId: string): string => `${wsPk(workspaceId)}#JOB`;
/** Not ended: working, or waiting for its client's input. */
const LIVE = '#s IN (:working, :waiting)';
const LIVE_VALUES = { ':working': 'working', ':waiting': 'input_required' } as const;
const lockSk = (tool: JobTool): string => `LOCK#${tool}`;
const seconds = (ms: number): number => Math.floor(ms / 1000);

export class JobStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** The job, written before its call answers; read strongly consistent by the next tasks/get wherever it lands. */
  async create(job: Omit<Job, 'status' | 'lastUpdatedAt'>): Promise<Job> {
    const made: Job = { ...job, status: 'working', lastUpdatedAt: job.createdAt };
    await this.db.send(
      new PutCommand({
        TableName: this.table,
        Item: {
          pk: jobPk(job.workspaceId),
          sk: job.jobId,
          ...made,
          expiresAt: seconds(Date.parse(job.createdAt) + JOB_TTL_MS),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return made;
  }

  /** The job, or undefined when there is none (or it expired: TTL deletes lag, so expiry is checked here too). */
  async get(workspaceId: string, jobId: string, now: Date): Promise<Job | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.table, Key: { pk: jobPk(workspaceId), sk: jobId }, ConsistentRead: true }),
    );
    const item = out.Item as (Job & { expiresAt?: number }) | undefined;
    if (!item || (item.expiresAt !== undefined && item.expiresAt < seconds(now.getTime()))) return undefined;
    const { expiresAt: _e, pk: _p, sk: _s, ...job } = item as Job & { expiresAt?: number; pk?: string; sk?: string };
    return job;
  }

  /**
   * Progress of a working job: its message now. Answers whether it should go on: false once it was
   * asked to stop, or is no longer working.
   */
  async progress(workspaceId: string, jobId: string, statusMessage: string, now: Date): Promise<boolean> {
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: jobPk(workspaceId), sk: jobId },
          UpdateExpression: 'SET statusMessage = :m, lastUpdatedAt = :at',
          ConditionExpression: '#s = :working',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':m': statusMessage, ':at': now.toISOString(), ':working': 'working' },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return out.Attributes?.cancel !== true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }

  /** A worker takes the job up: it says so, and from now its silence counts (long-work.ts). False when it is no longer working. */
  async start(workspaceId: string, jobId: string, now: Date): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: jobPk(workspaceId), sk: jobId },
          UpdateExpression: 'SET startedAt = :at, lastUpdatedAt = :at, statusMessage = :m',
          ConditionExpression: '#s = :working',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':at': now.toISOString(), ':m': 'Started.', ':working': 'working' },
        }),
      );
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }

  /** Asks a working job to stop; a job that ended already is left as it is. */
  async requestCancel(workspaceId: string, jobId: string, now: Date): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: jobPk(workspaceId), sk: jobId },
          UpdateExpression: 'SET cancel = :yes, lastUpdatedAt = :at',
          ConditionExpression: LIVE,
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':yes': true, ':at': now.toISOString(), ...LIVE_VALUES },
        }),
      );
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
    }
  }

  /** The job's end, once: false when it had ended already (a second delivery of its message). */
  async finish(workspaceId: string, jobId: string, end: JobEnd, now: Date): Promise<boolean> {
    const result = 'result' in end && end.result ? JSON.stringify(end.result) : undefined;
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: jobPk(workspaceId), sk: jobId },
          UpdateExpression: `SET #s = :s, statusMessage = :m, lastUpdatedAt = :at${result ? ', #r = :r' : ''}${'error' in end ? ', #e = :e' : ''} REMOVE inputRequests`,
          ConditionExpression: LIVE,
          ExpressionAttributeNames: { '#s': 'status', ...(result ? { '#r': 'result' } : {}), ...('error' in end ? { '#e': 'error' } : {}) },
          ExpressionAttributeValues: {
            ':s': end.status,
            ':m': end.statusMessage,
            ':at': now.toISOString(),
            ...LIVE_VALUES,
            ...(result ? { ':r': result } : {}),
            ...('error' in end ? { ':e': end.error } : {}),
          },
        }),
      );
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }

  /** A working job waits for its client: what it asks, until tasks/update answers every key. */
  async ask(workspaceId: string, jobId: string, inputRequests: JobInputRequests, statusMessage: string, now: Date): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: jobPk(workspaceId), sk: jobId },
          UpdateExpression: 'SET #s = :waiting, inputRequests = :q, statusMessage = :m, lastUpdatedAt = :at',
          ConditionExpression: '#s = :working',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':q': inputRequests, ':m': statusMessage, ':at': now.toISOString(), ...LIVE_VALUES },
        }),
      );
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }

  /**
   * Answers of tasks/update: those to a key the job still waits for are kept and the key is no
   * longer asked; the rest are ignored, as the extension asks. With nothing left to ask, the job is
   * working again. A job that asked nothing (or ended) is left as it is. `job` is the job as the caller
   * read it; a write that meets a later state reads it again.
   */
  async answer(job: Job, responses: Readonly<Record<string, unknown>>, now: Date, attempt = 1): Promise<void> {
    const { workspaceId, jobId } = job;
    if (job.status !== 'input_required') return;
    const asked = job.inputRequests ?? {};
    const answered = Object.keys(responses).filter((k) => Object.hasOwn(asked, k));
    if (!answered.length) return;
    const left = Object.fromEntries(Object.entries(asked).filter(([k]) => !answered.includes(k)));
    const kept = { ...(job.inputResponses ?? {}), ...Object.fromEntries(answered.map((k) => [k, responses[k]])) };
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: jobPk(workspaceId), sk: jobId },
          UpdateExpression: 'SET #s = :s, inputRequests = :q, inputResponses = :r, lastUpdatedAt = :at',
          // Only from the state read: two updates at once do not lose each other's answers.
          ConditionExpression: '#s = :waiting AND lastUpdatedAt = :before',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: {
            ':s': Object.keys(left).length ? 'input_required' : 'working',
            ':q': left,
            ':r': kept,
            ':at': now.toISOString(),
            ':before': job.lastUpdatedAt,
            ':waiting': 'input_required',
          },
        }),
      );
    } catch (err) {
      if (!isConditionFailure(err) || attempt >= 3) throw err;
      const later = await this.get(workspaceId, jobId, now);
      if (later) await this.answer(later, responses, new Date(Math.max(now.getTime(), Date.parse(later.lastUpdatedAt) + 1)), attempt + 1);
    }
  }

  /**
   * One job of this tool at a time in a workspace: the lock names the job and holds until `until`
   * (a worker that died lets go by itself). Answers the job that holds it when it is another's.
   */
  async lock(workspaceId: string, tool: JobTool, jobId: string, until: Date, now: Date): Promise<string | undefined> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: { pk: jobPk(workspaceId), sk: lockSk(tool), jobId, until: until.getTime(), expiresAt: seconds(until.getTime()) + 60 },
          ConditionExpression: 'attribute_not_exists(pk) OR #u < :now OR jobId = :job',
          ExpressionAttributeNames: { '#u': 'until' },
          ExpressionAttributeValues: { ':now': now.getTime(), ':job': jobId },
        }),
      );
      return undefined;
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
      const held = await this.db.send(
        new GetCommand({ TableName: this.table, Key: { pk: jobPk(workspaceId), sk: lockSk(tool) }, ConsistentRead: true }),
      );
      return String(held.Item?.jobId ?? 'another job');
    }
  }

  /** Lets go of the lock if this job still holds it. */
  async unlock(workspaceId: string, tool: JobTool, jobId: string): Promise<void> {
    try {
      await this.db.send(
        new DeleteCommand({
          TableName: this.table,
          Key: { pk: jobPk(workspaceId), sk: lockSk(tool) },
          ConditionExpression: 'jobId = :job',
          ExpressionAttributeValues: { ':job': jobId },
        }),
      );
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
    }
  }
}
