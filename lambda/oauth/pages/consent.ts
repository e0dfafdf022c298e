import { html } from '../../pages/html.js';
import { type Page, page } from '../../pages/layout.js';
import { SCOPE_DESCRIPTIONS } from '../../pages/scope-descriptions.js';

export interface ConsentView {
  readonly uid: string;
  readonly csrf: string;
  readonly clientName: string;
  /** The metadata document's host; undefined for a registered (DCR) client, which is unverified. */
  readonly verifiedDomain: string | undefined;
  readonly redirectUri: string;
  readonly person: { readonly name: string; readonly email: string };
  readonly workspaceName: string;
  /** Asked for now: ticked, and unticking one refuses it. */
  readonly scopes: readonly string[];
  /** Granted to this app before (revoked on the account page, not here). */
  readonly alreadyAllowed: readonly string[];
}

/**
 * Approve or deny, with the scopes asked for ticked: unticking one grants fewer. Two forms, no
 * script: it works the same with JavaScript off.
 */
export const consentPage = (v: ConsentView): Page => {
  const redirect = new URL(v.redirectUri);
  return page(
    { title: `Allow ${v.clientName}?`, formTargets: [redirect.origin] },
    html`<h1>Allow <span id="client-name">${v.clientName}</span> to use doers?</h1>
<p>${
      v.verifiedDomain
        ? html`The app identifies itself through <strong id="client-domain">${v.verifiedDomain}</strong>.`
        : html`<span class="badge" id="client-unverified">unverified</span> The app registered itself; its name is its own claim.`
    }</p>
<dl>
<dt>Signed in as</dt><dd id="person">${v.person.name} &lt;${v.person.email}&gt;</dd>
<dt>Workspace</dt><dd id="workspace">${v.workspaceName}</dd>
<dt>Returns to</dt><dd id="redirect-host">${redirect.host}</dd>
</dl>
<form method="post" action="/oauth/interaction/${v.uid}/consent">
<input type="hidden" name="csrf" value="${v.csrf}">
${
  v.scopes.length
    ? html`<fieldset>
<legend>It may</legend>
${v.scopes.map(
  (
    s,
  ) => html`<label><input type="checkbox" name="scope" value="${s}" checked> <span>${SCOPE_DESCRIPTIONS[s] ?? s} <span class="muted">(${s})</span></span></label>
`,
)}
</fieldset>`
    : ''
}
${
  v.alreadyAllowed.length
    ? html`<p id="already-allowed">Already allowed: ${v.alreadyAllowed.map((s) => SCOPE_DESCRIPTIONS[s] ?? s).join('; ')} <span class="muted">(${v.alreadyAllowed.join(', ')})</span>.</p>`
    : ''
}
<p class="muted">Your role in the workspace still decides what each action may change. You can revoke this access at any time.</p>
<div class="actions">
<button type="submit" class="primary" id="approve">Allow</button>
<button type="submit" formaction="/oauth/interaction/${v.uid}/abort" id="deny">Deny</button>
</div>
</form>`,
  );
};
