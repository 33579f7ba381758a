"""A GTK window that offers one file by drag and drop (text/uri-list), as a file manager
does: the end-to-end test presses the mouse on it with xdotool and releases over the app, so
the app receives a real XDND drop. Prints "ready X Y" (the button's centre on the screen) once
it is shown. Usage: drag_source.py FILE X Y (where to put the window)."""

import sys

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, Gio, GLib, Gtk  # noqa: E402

path, x, y = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
uri = Gio.File.new_for_path(path).get_uri()

window = Gtk.Window(title="decima-drag-source")
window.set_decorated(False)
window.set_default_size(160, 80)
window.move(x, y)
button = Gtk.Button(label="drag me")
button.drag_source_set(
    Gdk.ModifierType.BUTTON1_MASK,
    [Gtk.TargetEntry.new("text/uri-list", 0, 0)],
    Gdk.DragAction.COPY,
)
button.connect("drag-data-get", lambda _w, _c, data, _i, _t: data.set_uris([uri]))
button.connect("drag-end", lambda *_: GLib.timeout_add(500, Gtk.main_quit))
window.add(button)
window.connect("destroy", Gtk.main_quit)


def report():
    origin = window.get_window().get_origin()
    alloc = button.get_allocation()
    print(f"ready {origin.x + alloc.x + alloc.width // 2} {origin.y + alloc.y + alloc.height // 2}", flush=True)
    return False


window.connect("map-event", lambda *_: GLib.timeout_add(300, report))
window.show_all()
GLib.timeout_add(120_000, Gtk.main_quit)
Gtk.main()
