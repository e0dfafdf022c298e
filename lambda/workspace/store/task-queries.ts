import { storedKey } from '../model/statuses.js';
import type { Priority, Task } from '../model/types.js';
import { and, type Expression, or } from './expressions.js';

/** What the list reads take and give (task-store.ts, task-lists.ts, legacy-task-lists.ts). */

/** Which tasks a search wants. Every condition must hold; an absent one does not filter. */
export interface TaskFilter {
  readonly status: 'open' | 'done' | 'any';
  /** Within the phase, these workflow statuses only (their keys, model/statuses.ts); absent: all of them. */
  readonly states?: readonly string[];
  /** What a task found by `states` must show as, read with its project's statuses (model/statuses.ts StatusFilter). */
  readonly shows?: ((t: Task) => boolean) | undefined;
  /** Lower-case words, each of which must occur in the title, notes or labels. */
  readonly words?: readonly string[];
  /** `null`: unassigned tasks only. */
  readonly assigneeId?: string | null;
  /** `null`: tasks in no project (the inbox). */
  readonly projectId?: string | null;
  readonly label?: string;
  readonly priority?: Priority;
  /** These priorities only: the partitions read (a query's priority<=2). */
  readonly priorities?: readonly Priority[];
  readonly dueOnOrAfter?: string;
  readonly dueOnOrBefore?: string;
  /** Exclusive upper bound: "overdue" is due before the user's today. */
  readonly dueBefore?: string;
  /** Done tasks completed at or after this instant (ISO), and before `completedBefore`: a range of the done list. */
  readonly completedFrom?: string;
  readonly completedBefore?: string;
  /** true: waiting on an open task; false: not. */
  readonly blocked?: boolean;
  /** true: has a repeat rule; false: has none. */
  readonly recurring?: boolean;
  /** The direct subtasks of this task only (read from its entries: what they cost is what they are). */
  readonly parentId?: string;
  /** true: tasks that are no subtask; false: subtasks only. */
  readonly topLevel?: boolean;
  /**
   * What a task read must also be (a query's whole condition, surface/task-query.ts): checked on
   * every task the other fields let through, so those only narrow what is read.
   */
  readonly residual?: ((t: Task) => boolean) | undefined;
}

/** Where a page ended: the search continues strictly after this task. */
export interface TaskPosition {
  readonly segment: number;
  readonly taskId: string;
  readonly orderKey: string;
}

export interface TaskPage {
  readonly tasks: readonly Task[];
  /** Present when more matches may follow. */
  readonly next?: TaskPosition;
  /** The page ended short because the read units one call may spend on it were spent. */
  readonly cut?: boolean;
}

export interface UrgentPage {
  readonly tasks: readonly Task[];
  /** Where the next page goes on (present when more follow). */
  readonly next?: string;
}

/** Counts of one scope: the workspace (no field), an assignee (`null`: nobody), or a project (`null`: the inbox). */
export interface CountScope {
  readonly assigneeId?: string | null;
  readonly projectId?: string | null;
}

export interface Counts {
  readonly open: number;
  readonly overdue: number;
  readonly dueToday: number;
  /** All done tasks of a project (the workspace's and a person's are not kept). */
  readonly done: number;
  readonly doneBetween: number;
}

/**
 * The condition that a task is in one of `states`. A task stores no `state` for its phase's first
 * status (model/statuses.ts), so those are matched by their phase and the absence of one.
 */
export const statesCondition = (x: Expression, states: readonly string[]): string =>
  or(
    ...states.map((k) =>
      k === storedKey({ status: 'open' })
        ? and(x.absent('state'), x.eq('status', 'open'))
        : k === storedKey({ status: 'done' })
          ? and(x.absent('state'), x.eq('status', 'done'))
          : x.eq('state', k),
    ),
  );

/** The same, on a task in hand. */
export const inStates = (t: Task, states: readonly string[] | undefined, shows?: (t: Task) => boolean): boolean =>
  !states || (states.includes(storedKey(t)) && (!shows || shows(t)));
