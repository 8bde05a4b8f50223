/** Small shared pieces: errors, a copy button, a modal dialog, the once-shown secret. */
import { ReactNode, useEffect, useRef, useState } from 'react';
import { ApiError } from './api';

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const text = error instanceof ApiError ? `${error.message} (${error.status})` : error instanceof Error ? error.message : String(error);
  return (
    <p className="error" role="alert">
      {text}
    </p>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className="secondary"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
          setCopied(true);
        } catch {
          setCopied(false);
        }
      }}
    >
      {copied ? 'Copied' : label}
    </button>
  );
}

/** A native modal <dialog>: focus moves into it, Escape closes it, the page behind is inert. */
export function Modal({
  title,
  open,
  onClose,
  children,
  variant,
}: {
  title: string;
  open: boolean;
  onClose: () => void;
  children: ReactNode;
  variant?: 'wide' | 'drawer';
}) {
  const ref = useRef<HTMLDialogElement>(null);
  // The close event also follows a close the app asked for (open turned false, perhaps to open
  // another dialog): only a close by the user (Escape) is reported.
  const openNow = useRef(open);
  openNow.current = open;
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  const titleId = `dialog-${title.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      className={variant}
      onClose={() => {
        if (openNow.current) onClose();
      }}
    >
      {open ? (
        <>
          <div className="dialog-head">
            <h2 id={titleId}>{title}</h2>
            <button type="button" className="secondary" onClick={onClose} aria-label="Close">
              ×
            </button>
          </div>
          {children}
        </>
      ) : null}
    </dialog>
  );
}

/** A new key, shown this once: it is not kept anywhere by the console. */
export function SecretOnce({ label, value }: { label: string; value: string }) {
  return (
    <div className="secret">
      <p>
        <strong>{label}</strong> It is shown only now: copy it and keep it somewhere safe.
      </p>
      <div className="secret-row">
        <output data-testid="new-key" aria-label={label}>
          {value}
        </output>
        <CopyButton text={value} />
      </div>
    </div>
  );
}
