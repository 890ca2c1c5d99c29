"""The main window: outline, tabs, menus, file handling, welcome page, dialogs."""
