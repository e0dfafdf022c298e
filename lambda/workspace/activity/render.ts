import { type ActivityRecord, type FieldChange, isWebhookRecord } from '../model/activity.js';
import { categoryOfKey, phaseOf, type StatusSet, setOf, statusOf } from '../model/statuses.js';
import { dateInZone } from '../model/time.js';
import type { TaskStatus } from '../model/types.js';
import type { Names } from '../store/names.js';

/**
 * Activity records as a person reads them: "Tue 09:14 · Ada Lovelace via Claude 1.2 · moved due of
 * 'Send the quote' from Fri 5 Dec to Mon 8 Dec · act_…". Times are the reader's, in their zone.
 */

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "Fri 5 Dec" for a YYYY-MM-DD date (a calendar date: no zone involved). */
export const dayPhrase = (date: string): string => {
  const d = new Date(`${date}T00:00:00Z`);
  if (Number.isNaN(d.getTime())) return date;
  return `${WEEKDAYS[d.getUTCDay()]} ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]}`;
};

const timeFormats = new Map<string, Intl.DateTimeFormat>();
const hhmm = (instant: Date, timeZone: string): string => {
  let f = timeFormats.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    timeFormats.set(timeZone, f);
  }
  return f.format(instant);
};

/** "Tue 09:14" within the last six days, "Tue 25 Nov 09:14" before, with the year when it is another one. */
export const whenPhrase = (at: string, now: Date, timeZone: string): string => {
  const instant = new Date(at);
  const day = dateInZone(instant, timeZone);
  const today = dateInZone(now, timeZone);
  const ageDays = (Date.parse(`${today}T00:00:00Z`) - Date.parse(`${day}T00:00:00Z`)) / 86_400_000;
  const weekday = WEEKDAYS[new Date(`${day}T00:00:00Z`).getUTCDay()];
  const date = ageDays < 6 ? weekday : `${dayPhrase(day)}${day.slice(0, 4) === today.slice(0, 4) ? '' : ` ${day.slice(0, 4)}`}`;
  return `${date} ${hhmm(instant, timeZone)}`;
};

const quote = (s: unknown): string => `'${String(s)}'`;
const excerpt = (s: unknown, max = 60): string => {
  const t = String(s ?? '').replace(/\s+/g, ' ');
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
};

const due = (v: unknown): string => (typeof v === 'string' ? dayPhrase(v) : 'no date');

const quoted = (v: unknown, max = 40): string => (typeof v === 'string' && v ? quote(excerpt(v, max)) : 'none');
const list = (v: unknown): string => (Array.isArray(v) && v.length ? v.join(', ') : 'none');

/** Each field change with its before and after, as a person reads them. */
const fieldPhrase = (c: FieldChange, names: Names): string => {
  const member = (id: unknown) => (typeof id === 'string' ? (names.members.get(id)?.name ?? id) : 'nobody');
  const project = (id: unknown) => (typeof id === 'string' ? (names.projects.get(id)?.name ?? id) : 'no project');
  // A link is named by its key where the task had a number (the record keeps id → number).
  const links = (v: unknown) => {
    const entries = Object.entries((v as Record<string, number> | undefined) ?? {});
    return entries.length
      ? entries.map(([id, n]) => (n && names.workspaceKey ? `${names.workspaceKey}-${n}` : `[${id}]`)).join(', ')
      : 'nothing';
  };
  switch (c.field) {
    case 'dueDate':
      return `due ${due(c.before)} → ${due(c.after)}`;
    case 'dueTime':
      return `due time ${c.before ?? 'none'} → ${c.after ?? 'none'}`;
    case 'title':
    case 'name':
      return `${c.field} ${quoted(c.before, 60)} → ${quoted(c.after, 60)}`;
    case 'priority':
      return `priority ${c.before} → ${c.after}`;
    case 'assigneeId':
      return `assignee ${member(c.before)} → ${member(c.after)}`;
    case 'projectId':
      return `project ${project(c.before)} → ${project(c.after)}`;
    case 'labels':
      return `labels ${list(c.before)} → ${list(c.after)}`;
    case 'notes':
    case 'description':
      return `${c.field} ${quoted(c.before)} → ${quoted(c.after)}`;
    case 'blockedBy':
      return `waits on ${links(c.before)} → ${links(c.after)}`;
    case 'parentNumber': {
      const parent = (n: unknown) => (typeof n === 'number' && names.workspaceKey ? `sub of ${names.workspaceKey}-${n}` : 'top level');
      return `${parent(c.before)} → ${parent(c.after)}`;
    }
    case 'role':
      return `role ${c.before} → ${c.after}`;
    case 'status':
      return `status ${c.before} → ${c.after}`;
    case 'statuses': {
      const named = (v: unknown) =>
        Array.isArray(v) ? v.map((x) => String((x as { name?: unknown }).name)).join(', ') : "the workspace's";
      return `statuses ${named(c.before)} → ${named(c.after)}`;
    }
    case 'repeat': {
      const words = (v: unknown) => (v && typeof v === 'object' ? String((v as { words?: unknown }).words) : 'none');
      return `repeats ${words(c.before)} → ${words(c.after)}`;
    }
    default:
      return `${c.field} ${typeof c.before === 'object' ? JSON.stringify(c.before) : String(c.before ?? 'none')} → ${typeof c.after === 'object' ? JSON.stringify(c.after) : String(c.after ?? 'none')}`;
  }
};

/**
 * A task's phase and workflow status, stored apart (model/statuses.ts), told as one: "status Todo →
 * In progress". A status key alone says its phase; the phase alone, its first status.
 */
const statusInWords = (
  changes: readonly FieldChange[],
  sets: Readonly<Record<'before' | 'after', StatusSet>>,
  /** A creation: there is no status before. */
  created = false,
): readonly FieldChange[] => {
  const phase = changes.find((c) => c.field === 'status');
  const state = changes.find((c) => c.field === 'state');
  if (!phase && !state) return changes;
  const phaseOfKey = (k: unknown) => {
    const category = typeof k === 'string' ? categoryOfKey(k) : undefined;
    return category && phaseOf(category);
  };
  const side = (which: 'before' | 'after', other: 'before' | 'after'): string => {
    const status = (phase?.[which] as TaskStatus | undefined) ?? phaseOfKey(state?.[which]) ?? phaseOfKey(state?.[other]) ?? 'open';
    return statusOf({ status, state: state?.[which] as string | undefined }, sets[which]).name;
  };
  return [
    { field: 'status', ...(created ? {} : { before: side('before', 'after') }), after: side('after', 'before') },
    ...changes.filter((c) => c.field !== 'status' && c.field !== 'state'),
  ];
};

/** Each side's statuses are its own project's: a task moved to another project reads before and after apart. */
const statusSetsOf = (r: ActivityRecord, names: Names): Record<'before' | 'after', StatusSet> => {
  const moved = r.changes.find((c) => c.field === 'projectId');
  const setFor = (id: unknown) => setOf(typeof id === 'string' ? names.projects.get(id) : undefined);
  return moved ? { before: setFor(moved.before), after: setFor(moved.after) } : { before: setFor(r.projectId), after: setFor(r.projectId) };
};

/** How a record's field is called to a person: as the tools' arguments call it, where a store calls it otherwise. */
const FIELD_WORDS: Readonly<Record<string, string>> = {
  assigneeId: 'assignee',
  projectId: 'project',
  parentNumber: 'parent',
  deletedAt: 'deleted',
  revokedAt: 'revoked',
  userId: 'member',
};

/** Fields a person does not read apart: they are told by another (a status by its name, a parent by its key). */
const TOLD_BY_ANOTHER = new Set(['completedAt', 'completedBy', 'archivedAt', 'parentId', 'retiredStatuses', 'updatedAt']);

/**
 * A record's changes as a person reads them, before and after: status by its name (the phase and
 * the workflow key told as one), members and projects by name, links and parents by key, a rule by
 * its words, a delete as deleted true. What a tool answers; the record itself keeps what undo needs.
 */
export const changesInWords = (r: ActivityRecord, names: Names): FieldChange[] => {
  const member = (id: unknown) => (typeof id === 'string' ? (names.members.get(id)?.name ?? id) : undefined);
  const project = (id: unknown) => (typeof id === 'string' ? (names.projects.get(id)?.name ?? id) : undefined);
  const keyOf = (id: string, n: unknown) => (typeof n === 'number' && n && names.workspaceKey ? `${names.workspaceKey}-${n}` : id);
  const value = (field: string, v: unknown): unknown => {
    if (v === undefined) return undefined;
    switch (field) {
      case 'assigneeId':
      case 'userId':
        return member(v);
      case 'projectId':
        return project(v);
      case 'blockedBy':
        return Object.entries(v as Record<string, number>).map(([id, n]) => keyOf(id, n));
      case 'parentNumber':
        return keyOf('', v) || undefined;
      case 'repeat':
        return typeof v === 'object' && v ? (v as { words?: unknown }).words : v;
      case 'statuses':
        return Array.isArray(v) ? v.map((x) => (x as { name?: unknown }).name) : v;
      case 'deletedAt':
      case 'revokedAt':
        return true;
      default:
        return v;
    }
  };
  const changes = r.kind === 'task' ? statusInWords(r.changes, statusSetsOf(r, names), r.action === 'created') : r.changes;
  return changes
    .filter((c) => !TOLD_BY_ANOTHER.has(c.field))
    .map((c) => {
      const before =
        c.field === 'deletedAt' || c.field === 'revokedAt' ? (c.before === undefined ? false : true) : value(c.field, c.before);
      const after = c.field === 'deletedAt' || c.field === 'revokedAt' ? (c.after === undefined ? false : true) : value(c.field, c.after);
      return {
        field: FIELD_WORDS[c.field] ?? c.field,
        ...(before === undefined ? {} : { before }),
        ...(after === undefined ? {} : { after }),
      };
    });
};

/** What the change did, in words; `names` turns member and project ids into names where it can. */
export const describeChange = (r: ActivityRecord, names: Names): string => {
  const key =
    (r.kind === 'task' || r.kind === 'comment' || r.kind === 'attachment') && r.taskNumber !== undefined && names.workspaceKey
      ? `${names.workspaceKey}-${r.taskNumber} `
      : '';
  const label = `${key}${quote(r.targetLabel)}`;
  // A parent is told by its key (parentNumber); its id says the same to a person.
  const changes = (r.kind === 'task' ? statusInWords(r.changes, statusSetsOf(r, names)) : r.changes).filter(
    (c) => !['completedAt', 'completedBy', 'archivedAt', 'deletedAt', 'revokedAt', 'parentId', 'retiredStatuses'].includes(c.field),
  );
  const undo = r.undoOf ? `undid ${r.undoOf}: ` : '';
  const what = ((): string => {
    switch (`${r.kind}:${r.action}`) {
      case 'task:created':
        return `created task ${label}`;
      case isWebhookRecord(r) && 'workspace:created':
        return `added the ${r.targetLabel} (${(r.changes.find((c) => c.field === 'events')?.after as string[] | undefined)?.join(', ') ?? 'every event'})`;
      case isWebhookRecord(r) && 'workspace:removed':
        return `removed the ${r.targetLabel}`;
      case 'task:completed': {
        if (!r.occurrence) return `completed ${label}`;
        const next = r.changes.find((c) => c.field === 'dueDate')?.after;
        return `completed ${label}: done for ${dayPhrase(r.occurrence)}${typeof next === 'string' ? `, next due ${dayPhrase(next)}` : ''}`;
      }
      case 'attachment:created':
        return `attached ${quote(r.targetLabel)} to ${key.trim() || 'its task'}`;
      case 'attachment:deleted':
        return `deleted the attachment ${quote(r.targetLabel)} of ${key.trim() || 'its task'}`;
      case 'attachment:restored':
        return `restored the attachment ${quote(r.targetLabel)} of ${key.trim() || 'its task'}`;
      case 'task:canceled':
        return `canceled ${label}`;
      case 'task:reopened':
        return `reopened ${label}`;
      case 'task:deleted':
        return `deleted task ${label}${r.commentCount ? ` and its ${r.commentCount} comment(s)` : ''}`;
      case 'task:restored':
        return `restored task ${label}`;
      case 'comment:created':
        return `commented on ${label}: "${excerpt(r.changes.find((c) => c.field === 'body')?.after)}"`;
      case 'comment:deleted':
        return `deleted a comment on ${label}`;
      case 'comment:restored':
        return `restored a comment on ${label}`;
      case 'project:created':
        return `created project ${label}`;
      case 'project:archived':
        return `archived project ${label}`;
      case 'project:unarchived':
        return `restored archived project ${label}`;
      case 'project:deleted':
        return `deleted project ${label}`;
      case 'project:restored':
        return `restored project ${label}`;
      case 'member:invited':
        return `added ${r.targetLabel} as ${String(r.changes.find((c) => c.field === 'role')?.after ?? 'member')}`;
      case 'member:role_changed':
        return `changed the role of ${r.targetLabel}: ${changes.map((c) => fieldPhrase(c, names)).join('; ')}`;
      case 'member:disabled':
        return `disabled ${r.targetLabel}`;
      case 'member:enabled':
        return `enabled ${r.targetLabel}`;
      case 'member:removed':
        return `removed ${r.targetLabel} from the workspace`;
      case 'member:restored':
        return `added ${r.targetLabel} back`;
      case 'token:created':
        return `made token ${label}`;
      case 'token:revoked':
        return r.targetLabel.startsWith('connected app ') ? `disconnected ${r.targetLabel.slice(14)}` : `revoked token ${label}`;
      case 'workspace:disabled':
        return `disabled the workspace ${label}`;
      case 'workspace:enabled':
        return `enabled the workspace ${label}`;
      case 'view:created':
        return `saved the view ${label}: ${quote(String(r.changes.find((c) => c.field === 'query')?.after ?? ''))}`;
      case 'view:deleted':
        return `deleted the view ${label}`;
      case 'view:restored':
        return `restored the view ${label}`;
      default: {
        const due1 = changes.length === 1 && changes[0]!.field === 'dueDate';
        if (due1) return `moved due of ${label} from ${due(changes[0]!.before)} to ${due(changes[0]!.after)}`;
        return `changed ${label}: ${changes.map((c) => fieldPhrase(c, names)).join('; ') || 'nothing visible'}`;
      }
    }
  })();
  return `${undo}${what}`;
};

/** One line of activity_list's text. */
export const activityLine = (r: ActivityRecord, names: Names, now: Date, timeZone: string): string =>
  `${whenPhrase(r.at, now, timeZone)} · ${r.actorName} via ${r.client} · ${describeChange(r, names)} · ${r.activityId}${
    r.undoneBy ? ` (undone by ${r.undoneBy})` : ''
  }`;
