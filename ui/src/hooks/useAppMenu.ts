import { Channel } from "@tauri-apps/api/core";
import type { TFunction } from "i18next";
import { useEffect } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/call";
import { commands, type AppMenuAction, type AppMenuLabels } from "../bindings";
import { isMac } from "../lib/platform";
import { useLatest } from "./useLatest";

/** What the menu bar's choices do in the page. */
export type AppMenuActions = { openSettings: () => void };

/** The menu bar's words in the window's language. */
function menuWords(t: TFunction): AppMenuLabels {
  return {
    about: t("appMenu.about"),
    settings: t("appMenu.settings"),
    services: t("appMenu.services"),
    hide: t("appMenu.hide"),
    hideOthers: t("appMenu.hideOthers"),
    showAll: t("appMenu.showAll"),
    quit: t("appMenu.quit"),
    edit: t("appMenu.edit"),
    undo: t("appMenu.undo"),
    redo: t("appMenu.redo"),
    cut: t("appMenu.cut"),
    copy: t("appMenu.copy"),
    paste: t("appMenu.paste"),
    selectAll: t("appMenu.selectAll"),
    window: t("appMenu.window"),
    minimize: t("appMenu.minimize"),
    zoom: t("appMenu.zoom"),
    fullScreen: t("appMenu.fullScreen"),
    closeWindow: t("appMenu.closeWindow"),
  };
}

/**
 * macOS's menu bar, which Rust makes: the page gives it its words, at start and on every change
 * of language, so the menu speaks the window's language, and hears its Settings… (⌘,) through
 * a channel, as it hears drags (see `file_drags_watch` for why not Tauri's events). The other
 * platforms have no menu bar, and the page asks for none.
 */
export function useAppMenu(actions: AppMenuActions): void {
  const { t, i18n } = useTranslation();
  const handler = useLatest(actions);
  const language = i18n.resolvedLanguage;
  useEffect(() => {
    if (!isMac()) return;
    let alive = true;
    const channel = new Channel<AppMenuAction>();
    channel.onmessage = (action) => {
      if (alive && action.type === "openSettings") handler.current.openSettings();
    };
    // Outside the app (a plain browser) nothing answers; where the words cannot be set, the
    // menu stays in English and still works.
    void call(() => commands.appMenuWatch(menuWords(t), channel));
    return () => {
      alive = false;
    };
  }, [t, language, handler]);
}
