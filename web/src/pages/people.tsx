import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorBox, Field, FormCard, Loading, PageTitle, SecretOnce, Select, Table } from '../components/ui.js';
import { useAction, useResource } from '../hooks.js';
import type { Role } from '../types.js';

interface User {
  id: string;
  email: string;
  name: string | null;
  role: Role;
  status: 'invited' | 'active' | 'disabled';
  single_sign_on: boolean;
}

const ROLE_OPTIONS = [
  { value: 'viewer', label: 'Viewer: reads results' },
  { value: 'editor', label: 'Editor: experiments, metrics, segments, templates' },
  { value: 'admin', label: 'Admin: everything, people and keys included' },
];

/** Admins invite people, change their role, issue password reset links and sign them out. */
export function People() {
  const users = useResource(() => api<{ data: User[] }>('GET', '/v1/users'), []);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('editor');
  const [link, setLink] = useState<{ label: string; url: string } | null>(null);

  const invite = async () => {
    const invited = await api<{ invite_url: string; user: User }>('POST', '/v1/users', { email: email.trim(), role });
    setLink({ label: `Invitation link for ${invited.user.email}`, url: invited.invite_url });
    setEmail('');
    users.reload();
  };

  return (
    <>
      <PageTitle>People</PageTitle>
      {link ? <SecretOnce label={link.label} secret={link.url} onDone={() => setLink(null)} /> : null}
      <FormCard id="invite-title" title="Invite a person" submitLabel="Invite" onSubmit={invite} ready={email.trim() !== ''}>
        <Field label="Email" name="email" type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        <Select label="Role" name="role" value={role} options={ROLE_OPTIONS} onChange={(e) => setRole(e.currentTarget.value as Role)} />
      </FormCard>
      {users.loading ? <Loading /> : null}
      <ErrorBox error={users.error} />
      {users.data ? (
        <Table caption="People of this workspace" columns={['Name', 'Email', 'Role', 'Status', { hidden: 'Actions' }]}>
          {users.data.data.map((user) => (
            <PersonRow key={user.id} user={user} onChanged={users.reload} onLink={setLink} />
          ))}
        </Table>
      ) : null}
    </>
  );
}

function PersonRow({ user, onChanged, onLink }: { user: User; onChanged: () => void; onLink: (link: { label: string; url: string }) => void }) {
  const action = useAction();
  const patch = (body: Record<string, unknown>) =>
    void action.run(async () => {
      await api('PATCH', `/v1/users/${user.id}`, body);
      onChanged();
    });
  const reset = () =>
    void action.run(async () => {
      const issued = await api<{ reset_url: string }>('POST', `/v1/users/${user.id}/password-reset`);
      onLink({ label: `Password reset link for ${user.email}`, url: issued.reset_url });
    });
  const signOut = () => void action.run(async () => void (await api('POST', `/v1/users/${user.id}/sign-out`)));
  return (
    <tr>
      <td>{user.name ?? <span class="muted">(not accepted yet)</span>}</td>
      <td>{user.email}</td>
      <td>
        <select aria-label={`Role of ${user.email}`} value={user.role} disabled={action.busy} onChange={(e) => patch({ role: e.currentTarget.value })}>
          {ROLE_OPTIONS.map((option) => (
            <option key={option.value} value={option.value}>
              {option.value}
            </option>
          ))}
        </select>
      </td>
      <td>{user.status}</td>
      <td>
        <button type="button" disabled={action.busy || user.status === 'disabled'} onClick={reset}>
          Reset password
        </button>{' '}
        <button type="button" disabled={action.busy} onClick={signOut}>
          Sign out everywhere
        </button>{' '}
        <button type="button" disabled={action.busy} onClick={() => patch({ disabled: user.status !== 'disabled' })}>
          {user.status === 'disabled' ? 'Enable' : 'Disable'}
        </button>
        <ErrorBox error={action.error} />
      </td>
    </tr>
  );
}
