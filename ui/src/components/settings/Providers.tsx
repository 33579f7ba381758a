import { useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../../api/call";
import { commands, type AppError, type ProviderView } from "../../bindings";
import { formatNumber } from "../../lib/format";
import { windowSourceLabel } from "../../lib/labels";
import { InlineError } from "../InlineError";
import { ProviderForm } from "../provider/ProviderForm";
import { ProviderEditor } from "./ProviderEditor";
import { TestResult, testedOf, type Tested } from "./TestResult";
import { ThresholdsEditor } from "./ThresholdsEditor";

type Props = {
  providers: ProviderView[];
  /** The list changed in the runtime (added, removed, edited, tested): read it again. */
  onChanged: () => void;
  /** One provider as the runtime now has it (its thresholds saved). */
  onUpdated: (provider: ProviderView) => void;
};

/**
 * The providers (keys go to the keyring and are never shown), each with its test, editor,
 * removal and thresholds, then the add form the first start uses too.
 */
export function Providers({ providers, onChanged, onUpdated }: Props) {
  const { t } = useTranslation();
  const [tested, setTested] = useState<Record<string, Tested>>({});
  // A new form after each provider added: empty fields, the kind and preset back to their first.
  const [formKey, setFormKey] = useState(0);

  const test = async (name: string) => {
    setTested((all) => ({ ...all, [name]: { state: "testing" } }));
    const res = await call(() => commands.providerTest(name));
    setTested((all) => ({ ...all, [name]: testedOf(res) }));
    // The test read the served window again and may have stored it: the row says the new one.
    if (res.status === "ok" && !res.data.failure) onChanged();
  };

  const forget = (name: string) => {
    setTested(({ [name]: _, ...rest }) => rest);
    onChanged();
  };

  return (
    <>
      <section aria-label={t("settings.providers")} data-testid="providers">
        <h3>{t("settings.providers")}</h3>
        <ul className="settings-list">
          {providers.map((p) => (
            <ProviderRow
              key={p.name}
              provider={p}
              tested={tested[p.name] ?? null}
              onTest={() => void test(p.name)}
              // An edited or removed provider's last test no longer says anything of it.
              onEdited={() => forget(p.name)}
              onRemoved={() => forget(p.name)}
              onUpdated={onUpdated}
            />
          ))}
        </ul>
      </section>
      <section aria-label={t("settings.addProvider")} data-testid="provider-add-section">
        <h3>{t("settings.addProvider")}</h3>
        <ProviderForm
          key={formKey}
          makeDefault={false}
          onListChanged={onChanged}
          onDone={({ provider, probe }) => {
            // The row of the provider says its test passed, as its own Test button would.
            setTested((all) => ({ ...all, [provider.name]: { state: "passed", probe } }));
            setFormKey((k) => k + 1);
            onChanged();
          }}
        />
      </section>
    </>
  );
}

/** One provider: what it is and where its key is, its buttons, and what they opened or said. */
function ProviderRow(props: {
  provider: ProviderView;
  tested: Tested | null;
  onTest: () => void;
  onEdited: () => void;
  onRemoved: () => void;
  onUpdated: (provider: ProviderView) => void;
}) {
  const { provider: p, tested } = props;
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  const [editing, setEditing] = useState(false);
  const [removeError, setRemoveError] = useState<AppError | null>(null);

  const remove = async () => {
    const res = await call(() => commands.providerRemove(p.name));
    setRemoveError(res.status === "error" ? res.error : null);
    if (res.status === "ok") props.onRemoved();
  };

  return (
    <li data-testid="provider" data-name={p.name}>
      <strong>{p.name}</strong> {p.model} · {p.baseUrl} ·{" "}
      <span data-testid="provider-window-source" data-source={p.contextWindowSource}>
        {t("settings.windowIs", {
          window: windowSourceLabel(t, p.contextWindowSource, formatNumber(p.contextWindow, lang)),
        })}
      </span>{" "}
      ·{" "}
      <span data-testid="provider-key-place">
        {!p.hasApiKey ? t("settings.noKey") : p.keyFile ? t("settings.keyInFile", { path: p.keyFile }) : t("settings.keyStored")}
      </span>
      <button type="button" className="button button-small" data-testid="provider-test" onClick={props.onTest}>
        {t("settings.test")}
      </button>
      <button type="button" className="button button-small" data-testid="provider-edit" aria-expanded={editing} onClick={() => setEditing(!editing)}>
        {t("settings.edit")}
      </button>
      <button type="button" className="button button-small" data-testid="provider-remove" onClick={() => void remove()}>
        {t("settings.remove")}
      </button>
      {editing && (
        <ProviderEditor
          provider={p}
          onCancel={() => setEditing(false)}
          onSaved={() => {
            setEditing(false);
            props.onEdited();
          }}
        />
      )}
      {tested && <TestResult result={tested} />}
      <InlineError error={removeError} testId="provider-remove-error" />
      <ThresholdsEditor key={JSON.stringify(p.thresholds)} provider={p} onSaved={props.onUpdated} />
    </li>
  );
}
