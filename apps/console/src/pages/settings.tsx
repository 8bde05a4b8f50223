import { FormEvent, useState } from 'react';
import { browserTimeZone, isTimeZone, setReportingTimeZone, timeZones, useTimeZone } from '../settings';

export function SettingsPage() {
  const zone = useTimeZone();
  const [value, setValue] = useState(zone);
  const [message, setMessage] = useState('');
  const valid = isTimeZone(value);

  function save(event: FormEvent) {
    event.preventDefault();
    if (!valid) return;
    setReportingTimeZone(value);
    setMessage(`Reporting time zone set to ${value}.`);
  }

  return (
    <section aria-labelledby="settings-title">
      <h1 id="settings-title">Settings</h1>
      <form onSubmit={save} className="settings-form">
        <label htmlFor="timezone">Reporting time zone (IANA)</label>
        <input
          id="timezone"
          name="timezone"
          list="timezones"
          value={value}
          onChange={(event) => setValue(event.target.value)}
          aria-invalid={!valid}
          aria-describedby="timezone-help"
          autoComplete="off"
        />
        <datalist id="timezones">
          {timeZones().map((name) => (
            <option key={name} value={name} />
          ))}
        </datalist>
        <p id="timezone-help" className="hint">
          Days and hours in the overview chart, log times and budget resets are shown in this zone. Your browser&apos;s zone is {browserTimeZone()}. Kept in
          this browser only.
        </p>
        {!valid ? (
          <p className="error" role="alert">
            Not an IANA time zone: {value}
          </p>
        ) : null}
        <div className="actions">
          <button type="submit" disabled={!valid}>
            Save
          </button>
          <button
            type="button"
            className="secondary"
            onClick={() => {
              setReportingTimeZone(null);
              setValue(browserTimeZone());
              setMessage(`Using the browser's zone, ${browserTimeZone()}.`);
            }}
          >
            Use the browser&apos;s zone
          </button>
        </div>
        <p role="status">{message}</p>
      </form>
    </section>
  );
}
