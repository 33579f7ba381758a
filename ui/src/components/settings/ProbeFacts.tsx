import { useTranslation } from "react-i18next";
import type { ProviderProbe } from "../../bindings";
import { formatNumber } from "../../lib/format";
import { windowSourceLabel } from "../../lib/labels";

/** Whether a passed connection test learned anything to show beside its time. */
export function probeHasFacts(probe: ProviderProbe): boolean {
  return (
    (probe.contextWindow !== null && probe.contextWindowSource !== null) ||
    probe.windowWarning !== null ||
    probe.structuredOutput !== null
  );
}

/** The runtime's warning as a sentence: capitalised, with its full stop. */
function sentence(text: string): string {
  const trimmed = text.trim();
  const capital = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?。]$/.test(capital) ? capital : `${capital}.`;
}

/**
 * What a passed connection test learned: the window requests are fitted to and where it comes
 * from, the warning about it when there is one (a configured window clamped to the served one,
 * a server that could not say), and whether the server holds answers to a JSON schema.
 */
export function ProbeFacts({ probe }: { probe: ProviderProbe }) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  if (!probeHasFacts(probe)) return null;
  const { contextWindow, contextWindowSource, windowWarning, structuredOutput } = probe;
  return (
    <ul className="probe-facts" data-testid="probe-facts">
      {contextWindow !== null && contextWindowSource !== null && (
        <li data-testid="probe-window" data-source={contextWindowSource}>
          {t("settings.windowIs", { window: windowSourceLabel(t, contextWindowSource, formatNumber(contextWindow, lang)) })}
        </li>
      )}
      {windowWarning !== null && (
        <li className="probe-warning" data-testid="probe-window-warning">
          <span aria-hidden="true">⚠</span> {t("settings.windowWarning", { warning: sentence(windowWarning) })}
        </li>
      )}
      {structuredOutput !== null && (
        <li data-testid="probe-structured" data-structured={String(structuredOutput)}>
          {structuredOutput ? t("settings.structured.yes") : t("settings.structured.no")}
        </li>
      )}
    </ul>
  );
}
