import { ConflictRefusal } from '../errors.js';
import { type InputRequired, inputRequired, type ToolContext } from '../mcp/tool-registry.js';
import type { RequestMeta } from '../mcp/types.js';
import type { WorkspaceServices } from './services.js';

/**
 * Confirmation before a change that destroys or takes something away, through the 2026-07-28
 * multi round-trip pattern: the first call answers `input_required` with one form elicitation
 * that says exactly what will happen; the retry carries the person's answer and the signed state
 * (bound by the dispatcher to the tool and its arguments) naming the target and its version, so an
 * answer to a question about another state of the target changes nothing. Clients that cannot show
 * a form, and the earlier revisions, act at once (docs/workspace.md, "Confirmation").
 */

const KEY = 'confirm';

/** Form elicitation is declared: `elicitation.form`, or an `elicitation` naming no mode (the 2025 default). */
export const canAskForm = (meta: RequestMeta): boolean => {
  if (!meta.era.modern) return false;
  const e = meta.clientCapabilities.elicitation;
  if (typeof e !== 'object' || e === null || Array.isArray(e)) return false;
  const modes = e as Record<string, unknown>;
  return modes.form !== undefined || (modes.form === undefined && modes.url === undefined);
};

/** What the question is about: a later retry is answered only for this same state. */
export interface ConfirmTarget {
  readonly id: string;
  /** The target's version, or any other text naming its exact state. */
  readonly state: string;
}

export type Confirmation =
  | { readonly kind: 'proceed' }
  | { readonly kind: 'ask'; readonly request: InputRequired }
  | { readonly kind: 'declined' | 'cancelled' };

const isTarget = (v: unknown): v is ConfirmTarget =>
  typeof v === 'object' && v !== null && typeof (v as ConfirmTarget).id === 'string' && typeof (v as ConfirmTarget).state === 'string';

/**
 * Decides whether to act now, ask, or report that the person said no. `message` is what the person
 * reads; `button` labels the one boolean field they tick to confirm.
 */
export const confirmation = (
  ctx: Pick<ToolContext<WorkspaceServices>, 'meta' | 'input'>,
  target: ConfirmTarget,
  message: string,
  button: string,
): Confirmation => {
  if (!canAskForm(ctx.meta)) return { kind: 'proceed' };
  const answer = ctx.input?.responses[KEY] as { action?: unknown; content?: { confirm?: unknown } } | undefined;
  const asked = ctx.input?.state;
  if (answer === undefined || !isTarget(asked)) {
    return {
      kind: 'ask',
      request: inputRequired(
        {
          [KEY]: {
            method: 'elicitation/create',
            params: {
              mode: 'form',
              message,
              requestedSchema: {
                type: 'object',
                properties: { confirm: { type: 'boolean', title: button, default: false } },
                required: ['confirm'],
              },
            },
          },
        },
        target,
      ),
    };
  }
  if (asked.id !== target.id || asked.state !== target.state) {
    throw new ConflictRefusal(
      'Conflict: it changed between the question and the answer, so nothing was changed; read it again and ask once more.',
    );
  }
  if (answer.action === 'accept' && answer.content?.confirm === true) return { kind: 'proceed' };
  return { kind: answer.action === 'cancel' ? 'cancelled' : 'declined' };
};

/** The text of a result the person said no to: an ordinary result, not an error. */
export const notConfirmedText = (kind: 'declined' | 'cancelled', what: string): string =>
  `Nothing was changed: the person ${kind === 'declined' ? 'declined' : 'cancelled'} ${what}.`;
