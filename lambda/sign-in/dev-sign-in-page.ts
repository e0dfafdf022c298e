import { html } from '../pages/html.js';
import { type Page, page } from '../pages/layout.js';
import { accountIdOf } from '../vocabulary.js';
import type { DevMember } from './sign-in.js';

export interface DevSignInView {
  /** Where the chosen member is posted; `cancel`, where giving up is (absent: no cancel button). */
  readonly action: string;
  readonly cancel?: string;
  readonly csrf: string;
  /** The members offered, each with its workspace. */
  readonly members: readonly DevMember[];
  readonly formTargets: readonly string[];
}

/**
 * The development sign-in of `npm start`: pick any active member, no password. Only offered when
 * the server's public URL is loopback and no upstream provider is configured, and it says so.
 */
export const devSignInPage = (v: DevSignInView): Page =>
  page(
    { title: 'Development sign-in', formTargets: v.formTargets },
    html`<h1>Development sign-in</h1>
<p class="notice" role="note">This is the local development server: anyone on this machine may sign in as any member. A deployed doers signs people in through the workspace's identity provider instead.</p>
<form method="post" action="${v.action}">
<input type="hidden" name="csrf" value="${v.csrf}">
<p>Continue as:</p>
<ul class="members">
${v.members.map(
  ({
    member: m,
    workspace,
  }) => html`<li><button type="submit" name="account" value="${accountIdOf(m)}">${m.name} &lt;${m.email}&gt; <span class="muted">${m.role}, ${workspace.name}</span></button></li>
`,
)}
</ul>
</form>
${
  v.cancel
    ? html`<form method="post" action="${v.cancel}">
<input type="hidden" name="csrf" value="${v.csrf}">
<button type="submit" id="cancel">Cancel</button>
</form>`
    : ''
}`,
  );
