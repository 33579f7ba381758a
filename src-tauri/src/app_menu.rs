//! The menu bar macOS users expect, in the window's language: the app menu (About Decima,
//! Settings… ⌘,, Services, Hide, Quit ⌘Q), Edit (Undo, Redo, Cut, Copy, Paste, Select All:
//! without them ⌘C and ⌘V do nothing in a macOS webview, whose clipboard keys are menu items)
//! and Window (Minimize, Zoom, full screen, Close Window ⌘W). Linux and Windows keep their
//! window without a menu bar.
//!
//! The menu is made in English at start, and again in the window's language when the page
//! hands over its words ([`app_menu_watch`]), as it does the titles of the system's dialogs.
//! Settings… opens the page's own dialog, so choosing it is sent through the channel the page
//! gave, as drags are: a channel costs nothing until it is used, where listening to an event
//! wakes the webview's script engine in the app's process.
//!
//! The menu is put together on every platform, so that it is type-checked and tested where
//! Decima is developed; only macOS installs it.

use serde::{Deserialize, Serialize};
use tauri::ipc::Channel;
use tauri::menu::{
    AboutMetadata, Menu, MenuEvent, MenuItem, MenuItemKind, PredefinedMenuItem, Submenu,
    WINDOW_SUBMENU_ID,
};
use tauri::{AppHandle, Manager, Runtime, State};

use crate::commands::about::AppAbout;
use crate::{AppError, AppState};

/// Whether this platform shows the menu bar.
const INSTALLED: bool = cfg!(target_os = "macos");

/// The id of Settings…, the one item the page carries out; AppKit does the others.
const SETTINGS_ID: &str = "decima.settings";

/// Settings…'s keys, as every Mac app has them.
const SETTINGS_KEYS: &str = "Cmd+,";

/// The menu's words, in the window's language. The page sends them from its own tables (the
/// `appMenu` keys of `ui/src/i18n`), so the menu speaks the language chosen in the window.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(missing_docs)]
pub struct AppMenuLabels {
    pub about: String,
    pub settings: String,
    pub services: String,
    pub hide: String,
    pub hide_others: String,
    pub show_all: String,
    pub quit: String,
    pub edit: String,
    pub undo: String,
    pub redo: String,
    pub cut: String,
    pub copy: String,
    pub paste: String,
    pub select_all: String,
    pub window: String,
    pub minimize: String,
    pub zoom: String,
    pub full_screen: String,
    pub close_window: String,
}

impl AppMenuLabels {
    /// The words until the page gives its own: the page's English ones (a test keeps the two
    /// the same).
    pub fn english() -> Self {
        let text = |s: &str| s.to_owned();
        Self {
            about: text("About Decima"),
            settings: text("Settings…"),
            services: text("Services"),
            hide: text("Hide Decima"),
            hide_others: text("Hide Others"),
            show_all: text("Show All"),
            quit: text("Quit Decima"),
            edit: text("Edit"),
            undo: text("Undo"),
            redo: text("Redo"),
            cut: text("Cut"),
            copy: text("Copy"),
            paste: text("Paste"),
            select_all: text("Select All"),
            window: text("Window"),
            minimize: text("Minimize"),
            zoom: text("Zoom"),
            full_screen: text("Enter Full Screen"),
            close_window: text("Close Window"),
        }
    }
}

/// What a choice in the menu asks of the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum AppMenuAction {
    /// Settings… (⌘,): the page opens its Settings.
    OpenSettings,
}

/// One item of the menu: one AppKit carries out itself, Settings…, or a separator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    About,
    Settings,
    Services,
    Hide,
    HideOthers,
    ShowAll,
    Quit,
    Undo,
    Redo,
    Cut,
    Copy,
    Paste,
    SelectAll,
    Minimize,
    Zoom,
    FullScreen,
    CloseWindow,
    Separator,
}

/// The menus of the bar, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Heading {
    /// The app menu (macOS titles it with the app's name whatever it is given).
    App,
    Edit,
    /// Tauri makes the submenu with its id AppKit's Window menu, which lists the windows.
    Window,
}

/// The menu bar, as the Mac's own apps lay it out.
const LAYOUT: [(Heading, &[Entry]); 3] = {
    use Entry::{
        About, CloseWindow, Copy, Cut, FullScreen, Hide, HideOthers, Minimize, Paste, Quit, Redo,
        SelectAll, Separator, Services, Settings, ShowAll, Undo, Zoom,
    };
    [
        (
            Heading::App,
            &[
                About, Separator, Settings, Separator, Services, Separator, Hide, HideOthers,
                ShowAll, Separator, Quit,
            ],
        ),
        (
            Heading::Edit,
            &[Undo, Redo, Separator, Cut, Copy, Paste, SelectAll],
        ),
        (
            Heading::Window,
            &[Minimize, Zoom, FullScreen, Separator, CloseWindow],
        ),
    ]
};

/// A menu's title.
fn title(heading: Heading, labels: &AppMenuLabels) -> &str {
    match heading {
        Heading::App => "Decima",
        Heading::Edit => &labels.edit,
        Heading::Window => &labels.window,
    }
}

/// The menu bar in these words.
pub fn build<R: Runtime>(app: &AppHandle<R>, labels: &AppMenuLabels) -> tauri::Result<Menu<R>> {
    let menu = Menu::new(app)?;
    for (heading, entries) in LAYOUT {
        let text = title(heading, labels);
        let submenu = match heading {
            Heading::Window => Submenu::with_id(app, WINDOW_SUBMENU_ID, text, true)?,
            Heading::App | Heading::Edit => Submenu::new(app, text, true)?,
        };
        for entry in entries {
            submenu.append(&item(app, *entry, labels)?)?;
        }
        menu.append(&submenu)?;
    }
    Ok(menu)
}

/// One item in these words. AppKit gives the standard ones their keys (⌘Q, ⌘C, ⌘W…).
fn item<R: Runtime>(
    app: &AppHandle<R>,
    entry: Entry,
    labels: &AppMenuLabels,
) -> tauri::Result<MenuItemKind<R>> {
    let predefined = match entry {
        Entry::Settings => {
            let settings = MenuItem::with_id(
                app,
                SETTINGS_ID,
                &labels.settings,
                true,
                Some(SETTINGS_KEYS),
            )?;
            return Ok(MenuItemKind::MenuItem(settings));
        }
        Entry::About => PredefinedMenuItem::about(app, Some(labels.about.as_str()), Some(about()))?,
        Entry::Services => PredefinedMenuItem::services(app, Some(labels.services.as_str()))?,
        Entry::Hide => PredefinedMenuItem::hide(app, Some(labels.hide.as_str()))?,
        Entry::HideOthers => {
            PredefinedMenuItem::hide_others(app, Some(labels.hide_others.as_str()))?
        }
        Entry::ShowAll => PredefinedMenuItem::show_all(app, Some(labels.show_all.as_str()))?,
        Entry::Quit => PredefinedMenuItem::quit(app, Some(labels.quit.as_str()))?,
        Entry::Undo => PredefinedMenuItem::undo(app, Some(labels.undo.as_str()))?,
        Entry::Redo => PredefinedMenuItem::redo(app, Some(labels.redo.as_str()))?,
        Entry::Cut => PredefinedMenuItem::cut(app, Some(labels.cut.as_str()))?,
        Entry::Copy => PredefinedMenuItem::copy(app, Some(labels.copy.as_str()))?,
        Entry::Paste => PredefinedMenuItem::paste(app, Some(labels.paste.as_str()))?,
        Entry::SelectAll => PredefinedMenuItem::select_all(app, Some(labels.select_all.as_str()))?,
        Entry::Minimize => PredefinedMenuItem::minimize(app, Some(labels.minimize.as_str()))?,
        Entry::Zoom => PredefinedMenuItem::maximize(app, Some(labels.zoom.as_str()))?,
        Entry::FullScreen => {
            PredefinedMenuItem::fullscreen(app, Some(labels.full_screen.as_str()))?
        }
        Entry::CloseWindow => {
            PredefinedMenuItem::close_window(app, Some(labels.close_window.as_str()))?
        }
        Entry::Separator => PredefinedMenuItem::separator(app)?,
    };
    Ok(MenuItemKind::Predefined(predefined))
}

/// What the About panel says: the version, and in brackets the commit and the day of the
/// build, the three Settings' About shows and `decima --version` prints.
fn about() -> AboutMetadata<'static> {
    let build = AppAbout::current();
    AboutMetadata {
        name: Some("Decima".to_owned()),
        version: Some(build.version),
        short_version: Some(format!("{}, {}", build.commit, build.built)),
        ..AboutMetadata::default()
    }
}

/// Gives the app the menu bar where the platform has one (macOS), in English until the page
/// sends its words; elsewhere the builder is returned as it came.
pub fn install<R: Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    if !INSTALLED {
        return builder;
    }
    builder
        .menu(|app| build(app, &AppMenuLabels::english()))
        .on_menu_event(on_menu_event)
}

/// Carries out the one item AppKit does not: Settings… brings the window forward and tells the
/// page to open Settings.
fn on_menu_event<R: Runtime>(app: &AppHandle<R>, event: MenuEvent) {
    if event.id().as_ref() != SETTINGS_ID {
        return;
    }
    if let Some(window) = app.get_webview_window("main") {
        // A minimized window would open its Settings out of sight.
        if let Err(e) = window.unminimize().and_then(|()| window.set_focus()) {
            tracing::debug!(error = %e, "the window could not be brought forward");
        }
    }
    let watcher = app
        .try_state::<AppState>()
        .and_then(|state| state.menu_watcher.lock().ok().and_then(|w| w.clone()));
    match watcher {
        Some(channel) => {
            if let Err(e) = channel.send(AppMenuAction::OpenSettings) {
                tracing::warn!(error = %e, "the page was not told to open Settings");
            }
        }
        None => tracing::debug!("Settings… was chosen before the page listened"),
    }
}

/// Hands the menu's choices to the page through `on_action` from now on (a later call replaces
/// an earlier channel), and words the menu bar in `labels`, the window's language: the page
/// calls it at start and again when its language changes. Where there is no menu bar (Linux,
/// Windows) the words are not used.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "app_menu_watch"))]
pub fn app_menu_watch(
    app: AppHandle,
    state: State<'_, AppState>,
    labels: AppMenuLabels,
    on_action: Channel<AppMenuAction>,
) -> Result<(), AppError> {
    if let Ok(mut watcher) = state.menu_watcher.lock() {
        *watcher = Some(on_action);
    }
    if INSTALLED {
        let menu = build(&app, &labels).map_err(AppError::internal)?;
        app.set_menu(menu).map_err(AppError::internal)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `appMenu` table of the page's English words, read as the page sends it.
    fn page_english() -> AppMenuLabels {
        let en = include_str!("../../ui/src/i18n/en.ts");
        let start = en
            .find("\n  appMenu: {\n")
            .expect("en.ts has an appMenu table");
        let body = &en[start..];
        let end = body.find("\n  },").expect("the appMenu table ends");
        let mut fields = serde_json::Map::new();
        for line in body[..end].lines().skip(2) {
            let (key, value) = line.trim().split_once(": ").expect("a key and its words");
            let value: String = serde_json::from_str(value.trim_end_matches(',')).unwrap();
            fields.insert(key.to_owned(), value.into());
        }
        serde_json::from_value(fields.into()).unwrap()
    }

    #[test]
    fn the_words_before_the_page_speaks_are_its_english_ones() {
        assert_eq!(page_english(), AppMenuLabels::english());
    }

    #[test]
    fn the_bar_is_the_one_mac_apps_have() {
        let headings: Vec<Heading> = LAYOUT.iter().map(|(h, _)| *h).collect();
        assert_eq!(headings, [Heading::App, Heading::Edit, Heading::Window]);
        let of = |heading: Heading| {
            LAYOUT
                .iter()
                .find(|(h, _)| *h == heading)
                .map(|(_, entries)| entries.to_vec())
                .unwrap()
        };
        let app = of(Heading::App);
        assert_eq!(app.first(), Some(&Entry::About));
        assert_eq!(app.get(2), Some(&Entry::Settings));
        assert_eq!(app.last(), Some(&Entry::Quit));
        let edit = of(Heading::Edit);
        for needed in [
            Entry::Undo,
            Entry::Redo,
            Entry::Cut,
            Entry::Copy,
            Entry::Paste,
            Entry::SelectAll,
        ] {
            assert!(edit.contains(&needed), "{needed:?} missing from Edit");
        }
        let window = of(Heading::Window);
        assert_eq!(window.first(), Some(&Entry::Minimize));
        assert_eq!(window.last(), Some(&Entry::CloseWindow));
        // No menu begins or ends with a separator, nor has two in a row.
        for (heading, entries) in LAYOUT {
            assert_ne!(entries.first(), Some(&Entry::Separator), "{heading:?}");
            assert_ne!(entries.last(), Some(&Entry::Separator), "{heading:?}");
            assert!(
                !entries
                    .windows(2)
                    .any(|w| w == [Entry::Separator, Entry::Separator]),
                "{heading:?}"
            );
        }
    }

    #[test]
    fn the_about_panel_names_the_build() {
        let about = about();
        let build = AppAbout::current();
        assert_eq!(about.version.as_deref(), Some(build.version.as_str()));
        let brackets = about.short_version.unwrap_or_default();
        assert!(brackets.contains(&build.commit) && brackets.contains(&build.built));
    }
}
