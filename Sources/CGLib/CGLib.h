// GLib (Debian's libglib2.0-dev), for CGVariant only: its GVariant parser.
#include <glib.h>
