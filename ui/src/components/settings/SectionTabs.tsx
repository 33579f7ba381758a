import { useId, useRef, useState, type KeyboardEvent, type ReactNode } from "react";

/** One section of a tabbed dialog: its name (for `data-testid`s), its tab's label, its content. */
export type Section<Id extends string> = { id: Id; label: string; content: ReactNode };

type Props<Id extends string> = {
  /** What the list of tabs is, for screen readers. */
  label: string;
  sections: Section<Id>[];
  /** The `data-testid` prefix: `${prefix}-tab-${id}` and `${prefix}-panel-${id}`. */
  testIdPrefix: string;
};

/** The tab a key moves to from `index` among `count` (arrows wrap around; Home and End). */
function nextIndex(key: string, index: number, count: number): number | null {
  switch (key) {
    case "ArrowDown":
    case "ArrowRight":
      return (index + 1) % count;
    case "ArrowUp":
    case "ArrowLeft":
      return (index - 1 + count) % count;
    case "Home":
      return 0;
    case "End":
      return count - 1;
    default:
      return null;
  }
}

/**
 * A side list of sections beside the chosen one, so a setting is found by its section rather
 * than by scrolling one long form. The WAI-ARIA tabs pattern: a tablist whose tabs the arrow
 * keys, Home and End move between (choosing as they go), one tab stop, and a tabpanel named by
 * its tab. Every panel stays mounted, only hidden, so what was typed or loaded in one survives a
 * visit to another.
 */
export function SectionTabs<Id extends string>({ label, sections, testIdPrefix }: Props<Id>) {
  const base = useId();
  const [selected, setSelected] = useState<Id | undefined>(sections[0]?.id);
  const tabs = useRef<(HTMLButtonElement | null)[]>([]);

  const onKeyDown = (event: KeyboardEvent<HTMLButtonElement>, index: number) => {
    const next = nextIndex(event.key, index, sections.length);
    const section = next === null ? undefined : sections[next];
    if (next === null || section === undefined) return;
    event.preventDefault();
    setSelected(section.id);
    tabs.current[next]?.focus();
  };

  return (
    <div className="section-tabs">
      <div className="section-tablist" role="tablist" aria-label={label} aria-orientation="vertical">
        {sections.map((s, index) => (
          <button
            key={s.id}
            ref={(el) => {
              tabs.current[index] = el;
            }}
            type="button"
            role="tab"
            id={`${base}-tab-${s.id}`}
            aria-controls={`${base}-panel-${s.id}`}
            aria-selected={s.id === selected}
            tabIndex={s.id === selected ? 0 : -1}
            className="section-tab"
            data-testid={`${testIdPrefix}-tab-${s.id}`}
            onClick={() => setSelected(s.id)}
            onKeyDown={(e) => onKeyDown(e, index)}
          >
            {s.label}
          </button>
        ))}
      </div>
      {sections.map((s) => (
        <div
          key={s.id}
          role="tabpanel"
          id={`${base}-panel-${s.id}`}
          aria-labelledby={`${base}-tab-${s.id}`}
          hidden={s.id !== selected}
          // The panel scrolls: the keyboard can reach it to scroll it.
          tabIndex={0}
          className="section-panel"
          data-testid={`${testIdPrefix}-panel-${s.id}`}
        >
          {s.content}
        </div>
      ))}
    </div>
  );
}
