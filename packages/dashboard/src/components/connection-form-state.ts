import { useState } from 'react';
import { errorMessage } from '../api.ts';
import {
  type ConnectionDraft,
  type DraftPurpose,
  type FieldErrors,
  fieldOfApiError,
  validateDraft,
} from './connection-draft.ts';
import type { Connection } from './connection-queries.ts';

/**
 * The connection form's draft and the messages under its fields: the form's own checks, and an
 * API answer's (a 400 that names a field). Editing a field drops its message. `saved`: the
 * connection being edited, if any (its password need not be typed again).
 */
export function useConnectionForm(initial: () => ConnectionDraft, saved?: Connection) {
  const [draft, setDraft] = useState(initial);
  const [errors, setErrors] = useState<FieldErrors>({});
  return {
    draft,
    change: (patch: Partial<ConnectionDraft>) => {
      setDraft((current) => ({ ...current, ...patch }));
      setErrors((current) => {
        const next = { ...current };
        for (const field of Object.keys(patch) as (keyof ConnectionDraft)[]) delete next[field];
        return next;
      });
    },
    /** Checks the draft for `purpose` and shows what is wrong; true when it may be sent. */
    validate: (purpose: DraftPurpose): boolean => {
      const found = validateDraft(draft, purpose, saved);
      setErrors(found);
      return Object.keys(found).length === 0;
    },
    /** The messages to show: the form's own, and those of `apiErrors` that name a field. */
    shownErrors: (...apiErrors: unknown[]): FieldErrors => {
      const shown = { ...errors };
      for (const error of apiErrors) {
        const field = fieldOfApiError(error);
        if (field) shown[field] = errorMessage(error);
      }
      return shown;
    },
  };
}
