/* main.c - the kdsim executable: everything happens in kdsim_main() (commands.h), so
 * that tests can drive the same code. */
#include <stdio.h>

#include "commands.h"

int main(int argc, char **argv)
{
    return kdsim_main(argc, argv, stdout, stderr);
}
