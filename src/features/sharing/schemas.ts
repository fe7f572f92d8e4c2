import Type from 'typebox';
import { AnalysisSnapshotSchema } from '../analysis/schemas.js';
import { Id, Timestamp } from '../../http/schemas.js';
import { LINK_TOKEN_PATTERN } from '../people/links.js';

export const MAX_SHARE_DAYS = 90;

export const ShareLinkInput = Type.Object(
  {
    expires_in_days: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_SHARE_DAYS, default: 7, description: `days the link works, 1 to ${MAX_SHARE_DAYS} (default 7)` }),
    ),
  },
  { additionalProperties: false },
);

export const ShareLinkSchema = Type.Object(
  {
    id: Id,
    experiment_id: Id,
    status: Type.Enum(['active', 'expired', 'revoked']),
    created_at: Timestamp,
    expires_at: Timestamp,
    revoked_at: Type.Union([Timestamp, Type.Null()]),
  },
  { description: 'a read-only link to one experiment’s results (its URL is shown once, at creation)' },
);

export const CreatedShareLink = Type.Intersect([
  ShareLinkSchema,
  Type.Object({
    url: Type.String({
      description: 'the link (shown once): whoever has it reads this experiment’s results, and nothing else, until it expires or is revoked',
    }),
  }),
]);

export const ShareLinkList = Type.Object({ data: Type.Array(ShareLinkSchema) });
export const ExperimentParams = Type.Object({ id: Id });
export const ShareLinkParams = Type.Object({ id: Id });
export const SharedParams = Type.Object({ token: Type.String({ pattern: LINK_TOKEN_PATTERN }) });

export const SharedResults = Type.Object(
  {
    experiment: Type.Object({
      id: Id,
      key: Type.String(),
      name: Type.String(),
      hypothesis: Type.String(),
      status: Type.String(),
    }),
    results: AnalysisSnapshotSchema,
    expires_at: Timestamp,
  },
  { description: 'what a share link shows: one experiment and its latest results' },
);

export const ExportQuery = Type.Object(
  {
    format: Type.Enum(['csv', 'notebook'], {
      description: 'csv: one row per metric and variant; notebook: per-variant statistics as JSON with a Python script',
    }),
  },
  { additionalProperties: false },
);

export const HistoryExportQuery = Type.Object({ format: Type.Enum(['csv']) }, { additionalProperties: false });
