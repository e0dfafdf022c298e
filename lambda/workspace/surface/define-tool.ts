import { createHash } from 'node:crypto';
import type * as z from 'zod/mini';
import { defineToolFor, isInputRequired, type ToolContext, type ToolDefinition } from '../../mcp/tool-registry.js';
import { withCallBudget } from '../../platform/call-budget.js';
import { whenPhrase } from '../activity/render.js';
import { CALL_CEILINGS } from '../model/limits.js';
import { callInProgress, callMadeUnanswered, refusalOfStorage } from '../model/refusals.js';
import { stableJson } from '../model/stable-json.js';
import { type CallClaim, CallMadeAlready, CLAIM_SECONDS, type ClaimRecord } from '../store/call-claims.js';
import type { WorkspaceServices } from './services.js';

/** What a workspace tool's run is given: the call, and for a call that must not be made twice its claim. */
export interface WorkspaceToolContext extends ToolContext<WorkspaceServices> {
  readonly claim?: CallClaim;
}

type Run<I extends z.core.$ZodType, O extends z.core.$ZodType> = (
  args: z.output<I>,
  ctx: WorkspaceToolContext,
) => ReturnType<ToolDefinition<WorkspaceServices, I, O>['run']>;

export type WorkspaceToolDefinition<I extends z.core.$ZodType, O extends z.core.$ZodType> = Omit<
  ToolDefinition<WorkspaceServices, I, O>,
  'run'
> & {
  readonly run: Run<I, O>;
};

const define = defineToolFor<WorkspaceServices>();

/** What names a call that must not be made twice: the caller, the tool and its arguments as read. */
const callKeyOf = (ctx: ToolContext<WorkspaceServices>, args: unknown): string =>
  createHash('sha256')
    .update(stableJson([ctx.principal.workspaceId, ctx.principal.userId, ctx.toolName, args]))
    .digest('base64url');

/** The answer a call that met its own claim gives: the first call's answer, or why there is none yet. */
const answerOfClaim = (record: ClaimRecord, ctx: ToolContext<WorkspaceServices>): unknown => {
  const at = whenPhrase(record.at, ctx.now, ctx.principal.timeZone);
  if (record.status === 'answered' && record.answer !== undefined) {
    const first = JSON.parse(record.answer) as { textNotes?: readonly string[] };
    const note = `Replayed: this same call (same arguments) was answered at ${at}, so nothing was written again; to make another on purpose, change something in it (or wait ${CLAIM_SECONDS / 60} minutes).`;
    return { ...first, textNotes: [note, ...(first.textNotes ?? [])] };
  }
  if (record.status === 'made' && record.inProgressUntil > ctx.now.getTime())
    throw callInProgress(at, Math.max(1, Math.ceil((record.inProgressUntil - ctx.now.getTime()) / 1000)));
  throw callMadeUnanswered(at, record.callId);
};

/**
 * Declares a workspace tool; its argument and result types come from its schemas. Every call runs
 * with a budget of its own (platform/call-budget.ts: the read and write units one call may spend),
 * and what the storage layer could not do reaches the caller as the workspace's refusal
 * (model/refusals.ts, `refusalOfStorage`), never as a 500. A tool that is not idempotent claims its call.
 */
export const defineTool = <I extends z.core.$ZodType, O extends z.core.$ZodType>(
  def: WorkspaceToolDefinition<I, O>,
): ToolDefinition<WorkspaceServices> => {
  const { run, ...rest } = def;
  // A call that must not be made twice (a create, an add, an invite: not idempotent) claims itself in
  // its first write (store/call-claims.ts); the same call again within a few minutes, on any
  // instance, answers the first one's answer instead of writing again.
  const once = !def.annotations.readOnlyHint && !def.annotations.idempotentHint;
  type Out = Awaited<ReturnType<Run<I, O>>>;
  const claimed = async (args: z.output<I>, ctx: WorkspaceToolContext, replaces?: string): Promise<Out> => {
    if (!once) return (await run(args, ctx)) as Out;
    const claim = ctx.services.calls.claim(ctx.principal.workspaceId, callKeyOf(ctx, args), ctx.toolName, ctx.now, replaces);
    try {
      const out = (await run(args, { ...ctx, claim })) as Out;
      // Kept for a retry once it is answered: beside the release of the call's lease, not before the answer.
      if (!isInputRequired(out)) ctx.defer?.(claim.settle(out));
      return out;
    } catch (err) {
      if (!(err instanceof CallMadeAlready)) {
        ctx.defer?.(claim.settle(undefined));
        throw err;
      }
      // The first call was undone since (change_undo): this one is made anew, in its place.
      if (replaces === undefined && (await ctx.services.activity.get(ctx.principal.workspaceId, err.record.callId))?.undoneBy)
        return claimed(args, ctx, err.record.callId);
      return answerOfClaim(err.record, ctx) as Out;
    }
  };
  return define({
    ...rest,
    run: (args, ctx) =>
      withCallBudget(CALL_CEILINGS, () => claimed(args, ctx)).catch((err: unknown) => {
        throw refusalOfStorage(err) ?? err;
      }),
  } as ToolDefinition<WorkspaceServices, I, O>);
};
