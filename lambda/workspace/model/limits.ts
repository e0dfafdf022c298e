import type { CallCeilings } from '../../platform/call-budget.js';

/**
 * The bounds the workspace holds to, in one place: what a task may link, what one call may touch,
 * and what one call may cost. Each is checked before anything is written, and named in the refusal.
 */

/** A task waits on at most this many others. */
export const MAX_BLOCKERS = 20;
/** A task is waited on by at most this many (one write must reach every one of them). */
export const MAX_DEPENDENTS = 60;
/** A bulk call takes 1 to this many items. */
export const MAX_ITEMS = 50;

/**
 * The write units one call may spend, as DynamoDB bills them (estimated from the request's sizes
 * before it is sent): a bulk call or a bulk undo that would spend more is cut there, and says so.
 * 10,000 units cost about $0.006 on demand and hold the largest legitimate call (fifty tasks with
 * the longest notes); an ordinary change spends under 20.
 */
export const MAX_WRITE_UNITS_PER_CALL = 10_000;

/**
 * The read units one call may spend on a filtered read (a page whose matches are sparse): past it
 * the page ends short, with a cursor that goes on where the reading stopped.
 */
export const MAX_READ_UNITS_PER_CALL = 100;

/**
 * What one tool call may read in all (platform/call-budget.ts counts it as DynamoDB reports it):
 * 1,000 read units is 4 MB read strongly consistent, twice what the largest legitimate call reads
 * (fifty tasks with the longest notes); past it the call stops with a refusal rather than reading on.
 */
export const CALL_CEILINGS: CallCeilings = {
  readUnits: 1_000,
  readBytes: 4 * 1024 * 1024,
  writeUnits: MAX_WRITE_UNITS_PER_CALL,
};

/** A task's notes are at most this many characters, and so at most four times as many bytes. */
export const MAX_NOTES_LENGTH = 10_000;
export const MAX_NOTES_BYTES = 4 * MAX_NOTES_LENGTH;

/** Tasks nest this many levels deep at most: a task, its subtasks, and theirs. */
export const MAX_LEVELS = 3;
/** A task has at most this many live subtasks (task_get lists them all, from one read). */
export const MAX_SUBTASKS = 100;

/** Files one task holds at most: task_get lists them all, and its answer stays small. */
export const MAX_ATTACHMENTS = 100;

/** Reminders one task holds at most (model/reminder-words.ts): each is a message someone is sent. */
export const MAX_REMINDERS = 20;

/**
 * People one text (a comment, a task's notes) mentions at most (model/mentions.ts): each one is
 * told, so a text naming the whole workspace would be a storm of notices.
 */
export const MAX_MENTIONS = 20;
