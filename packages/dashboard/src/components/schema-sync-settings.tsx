import { SelectField, TextField } from './fields.tsx';

/** A database's sync and logging settings as typed; '' means "the default" on creation. */
export interface SyncSettings {
  syncMode: '' | 'cdc' | 'poll';
  syncInterval: string;
  logLevel: 'trace' | 'debug' | 'info' | 'warn' | 'error';
  safetyNet: string;
}

export type SyncErrors = Partial<Record<keyof SyncSettings, string>>;

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;

function wholeSeconds(text: string, min: number, max: number): string | undefined {
  if (text.trim() === '') return undefined;
  const value = Number(text);
  return Number.isInteger(value) && value >= min && value <= max
    ? undefined
    : `A whole number of seconds from ${min} to ${max}.`;
}

export function validateSync(settings: SyncSettings, pollMinimum: number | undefined): SyncErrors {
  const errors: SyncErrors = {};
  const interval = wholeSeconds(settings.syncInterval, 1, 86_400);
  if (interval) errors.syncInterval = interval;
  else if (
    settings.syncMode === 'poll' &&
    pollMinimum !== undefined &&
    settings.syncInterval.trim() !== '' &&
    Number(settings.syncInterval) < pollMinimum
  ) {
    errors.syncInterval = `Your plan polls at most every ${pollMinimum} seconds.`;
  }
  const safetyNet = wholeSeconds(settings.safetyNet, 0, 604_800);
  if (safetyNet) errors.safetyNet = safetyNet;
  return errors;
}

/**
 * Sync mode, interval, safety net and log level. With `defaults`, each can be left to the
 * API's default (taken from the schema config's `sync` section).
 */
export function SyncSettingsFields(props: {
  settings: SyncSettings;
  onChange: (change: Partial<SyncSettings>) => void;
  errors: SyncErrors;
  pollMinimum: number | undefined;
  defaults?: boolean;
  disabled?: boolean;
  /** Why the sync mode is what it is (the API's syncModeReason, or the connection test's). */
  modeNote?: string | null | undefined;
}) {
  const { settings, onChange, errors } = props;
  const fromConfig = props.defaults
    ? [{ value: '', label: 'Automatic: cdc, or poll where the source cannot do CDC' }]
    : [];
  // Switching to poll keeps no interval the plan refuses: CDC's 1 s becomes the plan's fastest.
  const changeMode = (syncMode: SyncSettings['syncMode']) => {
    const interval = settings.syncInterval.trim();
    const tooFast =
      syncMode === 'poll' &&
      props.pollMinimum !== undefined &&
      interval !== '' &&
      Number(interval) < props.pollMinimum;
    onChange(tooFast ? { syncMode, syncInterval: String(props.pollMinimum) } : { syncMode });
  };
  const pollHint =
    props.pollMinimum !== undefined
      ? `Poll mode: at least ${props.pollMinimum} s on your plan.`
      : undefined;
  return (
    <div className="form-grid">
      <SelectField
        label="Sync mode"
        value={settings.syncMode}
        onChange={(event) => changeMode(event.target.value as SyncSettings['syncMode'])}
        options={[
          ...fromConfig,
          { value: 'cdc', label: 'cdc: change data capture' },
          { value: 'poll', label: 'poll: re-read every interval' },
        ]}
        hint={props.modeNote ?? undefined}
        disabled={props.disabled}
        error={errors.syncMode}
      />
      <TextField
        label="Sync interval (seconds)"
        type="number"
        inputMode="numeric"
        min={1}
        max={86_400}
        value={settings.syncInterval}
        onChange={(event) => onChange({ syncInterval: event.target.value })}
        placeholder={props.defaults ? 'from the config (1)' : undefined}
        hint={pollHint}
        disabled={props.disabled}
        error={errors.syncInterval}
      />
      <TextField
        label="Safety net (seconds)"
        type="number"
        inputMode="numeric"
        min={0}
        value={settings.safetyNet}
        onChange={(event) => onChange({ safetyNet: event.target.value })}
        placeholder={props.defaults ? 'from the config (0: off)' : undefined}
        hint="A full reload every this many seconds; 0 turns it off."
        disabled={props.disabled}
        error={errors.safetyNet}
      />
      <SelectField
        label="Log level"
        value={settings.logLevel}
        onChange={(event) => onChange({ logLevel: event.target.value as SyncSettings['logLevel'] })}
        options={LOG_LEVELS.map((level) => ({
          value: level,
          label: level === 'info' ? 'info (default)' : level,
        }))}
        disabled={props.disabled}
        error={errors.logLevel}
      />
    </div>
  );
}
