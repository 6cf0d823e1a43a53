import { z } from 'zod';

/** "Required" for a missing field, else what the field should be. */
const expected = (what: string) => ({
  error: (issue: { input: unknown }) => (issue.input === undefined ? 'Required' : `Expected ${what}`),
});
const string = () => z.string(expected('a string'));

const phone = string().regex(
  /^\+[0-9]{6,15}$/,
  'Expected a phone number in international format: + then 6 to 15 digits',
);
const text = (max: number) => string().min(1, 'Must not be empty').max(max, `At most ${max} characters`);
const prefixed = (prefix: string) =>
  string().regex(new RegExp(`^${prefix}[A-Za-z0-9_]+$`), `Expected an id starting with ${prefix}`);

export const messageRequest = z.object({ to: phone, sender: text(11), body: text(1600) });

export const campaignRequest = z.object({
  name: text(200),
  sender: text(11),
  template_id: prefixed('tmpl_'),
  group_id: prefixed('grp_'),
});

export const otpRequest = z.object({
  to: phone,
  purpose: text(64),
  ttl_seconds: z
    .number(expected('a whole number of seconds'))
    .int('Expected a whole number of seconds')
    .min(30, 'Must be at least 30 seconds')
    .max(86_400, 'Must be at most 86400 seconds (a day)'),
});

export const groupQuery = prefixed('grp_');

/** Senders, templates and groups given as options or in the CLI's --data file. */
export const seedData = z.object({
  senders: z.array(text(11)).optional(),
  templates: z.array(z.object({ id: prefixed('tmpl_'), body: text(1600) })).optional(),
  groups: z
    .array(
      z.object({
        id: prefixed('grp_'),
        name: text(200).optional(),
        contacts: z.array(z.object({ id: string().optional(), name: text(200).optional(), phone })),
      }),
    )
    .optional(),
});

/** The first problem, named by its field: what the caller fixes first. */
export function describeIssue(error: z.ZodError): string {
  const [issue] = error.issues;
  if (!issue) return 'The body is not valid.';
  const field = issue.path.join('.');
  return field ? `${field}: ${issue.message}.` : `${issue.message}.`;
}
