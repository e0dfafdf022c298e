import { type DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { fromItem } from '../../platform/dynamodb.js';
import { PROJECT_PREFIX, projectSk, wsPk } from '../../platform/item-keys.js';
import type { WriteOp } from '../../platform/transact.js';
import { exists, projectDeleted, projectNotFound, versionConflict } from '../model/refusals.js';
import type { Project } from '../model/types.js';

export interface ProjectPage {
  readonly projects: readonly Project[];
  /** The last returned project's id, present when more follow. */
  readonly next?: string;
}

export interface ProjectStore {
  /** A project that exists and is not deleted. */
  get(workspaceId: string, projectId: string): Promise<Project | undefined>;
  /** Also a deleted one (kept for undo). */
  getAny(workspaceId: string, projectId: string): Promise<Project | undefined>;
  /** A page in id order, strictly after `afterId` (deleted projects never appear). */
  list(workspaceId: string, opts: { includeArchived: boolean }, limit: number, afterId?: string): Promise<ProjectPage>;
  /** Every project of the workspace (names for task summaries), deleted ones left out. */
  all(workspaceId: string): Promise<Project[]>;
}

/**
 * A project's write: the project writer's alone (store/writes.ts).
 */
export interface ProjectWrites {
  /** As TaskStore.putOp: new (`expectedVersion` undefined) or still at `expectedVersion`; `deletedAt` stores it deleted. */
  putOp(project: Project, expectedVersion: number | undefined, expiresAt?: number): WriteOp;
}

const toItem = (p: Project, expiresAt?: number): Record<string, unknown> => ({
  pk: wsPk(p.workspaceId),
  sk: projectSk(p.projectId),
  ...p,
  ...(p.deletedAt && expiresAt ? { expiresAt } : {}),
});

const toProject = (item: Record<string, unknown>): Project => {
  const { expiresAt: _e, ...rest } = fromItem<Project & { expiresAt?: number }>(item);
  return rest;
};

export const projectRefusal = (
  projectId: string,
  expectedVersion: number | undefined,
  current: Record<string, unknown> | undefined,
): never => {
  if (!current) throw projectNotFound(projectId);
  if (current.deletedAt) throw projectDeleted(projectId, String(current.deletedAt));
  if (expectedVersion === undefined) throw exists(`project ${projectId}`);
  throw versionConflict(`project ${projectId}`, Number(current.version), expectedVersion, 'project_get');
};

/** Projects are `PROJECT#<id>` items in the workspace partition; writes are conditional on `version`. */
export class DynamoProjectStore implements ProjectStore, ProjectWrites {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async get(workspaceId: string, projectId: string): Promise<Project | undefined> {
    const project = await this.getAny(workspaceId, projectId);
    return project?.deletedAt ? undefined : project;
  }

  async getAny(workspaceId: string, projectId: string): Promise<Project | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.table, Key: { pk: wsPk(workspaceId), sk: projectSk(projectId) }, ConsistentRead: true }),
    );
    return out.Item ? toProject(out.Item) : undefined;
  }

  putOp(project: Project, expectedVersion: number | undefined, expiresAt?: number): WriteOp {
    return {
      item: {
        Put: {
          TableName: this.table,
          Item: toItem(project, expiresAt),
          ...(expectedVersion === undefined
            ? { ConditionExpression: 'attribute_not_exists(pk)' }
            : {
                ConditionExpression: 'attribute_exists(pk) AND #v = :v',
                ExpressionAttributeNames: { '#v': 'version' },
                ExpressionAttributeValues: { ':v': expectedVersion },
              }),
        },
      },
      refused: (current) => projectRefusal(project.projectId, expectedVersion, current),
    };
  }

  async list(workspaceId: string, opts: { includeArchived: boolean }, limit: number, afterId?: string): Promise<ProjectPage> {
    const found: Project[] = [];
    let startKey: Record<string, unknown> | undefined = afterId ? { pk: wsPk(workspaceId), sk: projectSk(afterId) } : undefined;
    do {
      const out = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
          FilterExpression: opts.includeArchived ? 'attribute_not_exists(deletedAt)' : '#s = :active AND attribute_not_exists(deletedAt)',
          ...(opts.includeArchived ? {} : { ExpressionAttributeNames: { '#s': 'status' } }),
          ExpressionAttributeValues: {
            ':pk': wsPk(workspaceId),
            ':p': PROJECT_PREFIX,
            ...(opts.includeArchived ? {} : { ':active': 'active' }),
          },
          ExclusiveStartKey: startKey,
          // Filtered (deleted ones are kept a while), so more per round trip than the page needs.
          Limit: Math.max(limit + 1 - found.length, 100),
        }),
      );
      for (const item of out.Items ?? []) {
        found.push(toProject(item));
        if (found.length > limit) break;
      }
      startKey = out.LastEvaluatedKey;
    } while (startKey && found.length <= limit);
    const page = found.slice(0, limit);
    return { projects: page, ...(found.length > limit ? { next: page.at(-1)!.projectId } : {}) };
  }

  async all(workspaceId: string): Promise<Project[]> {
    const out: Project[] = [];
    let after: string | undefined;
    do {
      const page = await this.list(workspaceId, { includeArchived: true }, 1000, after);
      out.push(...page.projects);
      after = page.next;
    } while (after);
    return out;
  }
}
