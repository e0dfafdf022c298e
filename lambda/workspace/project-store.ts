import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictRefusal, NotFoundRefusal } from '../errors.js';
import { fromItem } from '../platform/dynamodb.js';
import { PROJECT_PREFIX, projectSk, wsPk } from '../platform/item-keys.js';
import { conditionally } from './item-support.js';
import type { Project } from './model.js';

export interface ProjectPage {
  readonly projects: readonly Project[];
  /** The last returned project's id, present when more follow. */
  readonly next?: string;
}

export interface ProjectStore {
  get(workspaceId: string, projectId: string): Promise<Project | undefined>;
  /** Creates the project; false when its id is taken. */
  create(project: Project): Promise<boolean>;
  replace(project: Project, expectedVersion: number): Promise<Project>;
  remove(workspaceId: string, projectId: string, expectedVersion: number): Promise<void>;
  /** A page in id order, strictly after `afterId`. */
  list(workspaceId: string, opts: { includeArchived: boolean }, limit: number, afterId?: string): Promise<ProjectPage>;
  /** Every project of the workspace (names for task summaries). */
  all(workspaceId: string): Promise<Project[]>;
}

const toItem = (p: Project): Record<string, unknown> => ({ pk: wsPk(p.workspaceId), sk: projectSk(p.projectId), ...p });

/** Projects are `PROJECT#<id>` items in the workspace partition; writes are conditional on `version`. */
export class DynamoProjectStore implements ProjectStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    /** Announces a member or project write, so cached directory snapshots are read again. */
    private readonly changed: (workspaceId: string) => Promise<void> = async () => {},
  ) {}

  async get(workspaceId: string, projectId: string): Promise<Project | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.table, Key: { pk: wsPk(workspaceId), sk: projectSk(projectId) }, ConsistentRead: true }),
    );
    return out.Item ? fromItem<Project>(out.Item) : undefined;
  }

  async create(project: Project): Promise<boolean> {
    return conditionally(
      async () => {
        await this.db.send(
          new PutCommand({ TableName: this.table, Item: toItem(project), ConditionExpression: 'attribute_not_exists(pk)' }),
        );
        await this.changed(project.workspaceId);
        return true;
      },
      async () => false,
    );
  }

  async replace(project: Project, expectedVersion: number): Promise<Project> {
    await conditionally(
      () =>
        this.db.send(
          new PutCommand({
            TableName: this.table,
            Item: toItem(project),
            ConditionExpression: 'attribute_exists(pk) AND #v = :v',
            ExpressionAttributeNames: { '#v': 'version' },
            ExpressionAttributeValues: { ':v': expectedVersion },
          }),
        ),
      () => this.refusal(project.workspaceId, project.projectId, expectedVersion),
    );
    await this.changed(project.workspaceId);
    return project;
  }

  async remove(workspaceId: string, projectId: string, expectedVersion: number): Promise<void> {
    await conditionally(
      () =>
        this.db.send(
          new DeleteCommand({
            TableName: this.table,
            Key: { pk: wsPk(workspaceId), sk: projectSk(projectId) },
            ConditionExpression: 'attribute_exists(pk) AND #v = :v',
            ExpressionAttributeNames: { '#v': 'version' },
            ExpressionAttributeValues: { ':v': expectedVersion },
          }),
        ),
      () => this.refusal(workspaceId, projectId, expectedVersion),
    );
    await this.changed(workspaceId);
  }

  async list(workspaceId: string, opts: { includeArchived: boolean }, limit: number, afterId?: string): Promise<ProjectPage> {
    const found: Project[] = [];
    let startKey: Record<string, unknown> | undefined = afterId ? { pk: wsPk(workspaceId), sk: projectSk(afterId) } : undefined;
    do {
      const out = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
          ...(opts.includeArchived ? {} : { FilterExpression: '#s = :active', ExpressionAttributeNames: { '#s': 'status' } }),
          ExpressionAttributeValues: {
            ':pk': wsPk(workspaceId),
            ':p': PROJECT_PREFIX,
            ...(opts.includeArchived ? {} : { ':active': 'active' }),
          },
          ExclusiveStartKey: startKey,
          Limit: opts.includeArchived ? limit + 1 - found.length : 100,
        }),
      );
      for (const item of out.Items ?? []) {
        found.push(fromItem<Project>(item));
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

  private async refusal(workspaceId: string, projectId: string, expectedVersion: number): Promise<never> {
    const current = await this.get(workspaceId, projectId);
    if (!current) throw new NotFoundRefusal(`Project ${projectId} was not found in this workspace`);
    throw new ConflictRefusal(
      `Conflict: project ${projectId} is at version ${current.version}, not ${expectedVersion}; someone changed it. ` +
        `Read it again (project_get) and retry with version ${current.version}.`,
    );
  }
}
