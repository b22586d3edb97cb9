// Whether the command `run` starts may have the terminal: the foreground
// goes to its process group only when nothing else of holdfast's job would
// read the terminal meanwhile.
#pragma once

namespace holdfast::cli {

/// The descriptor (0, 1 or 2) of the terminal to hand to the command's
/// process group, or -1 to leave it where it is. It is handed over when
/// holdfast's group is the terminal's foreground (an interactive shell's
/// job, or a script run from one) and every other process of that group is
/// one of holdfast's ancestors (the script waiting for it): so the command
/// can read the terminal and gets its ^C and ^Z. In a pipeline whose other
/// stages share holdfast's group (`holdfast run ... | less`), they keep it,
/// as they keep it without holdfast; the command then runs in the background
/// and stops if it reads the terminal.
int terminal_for_command();

}  // namespace holdfast::cli
