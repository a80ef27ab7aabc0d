# testcli.sh - the start every command-line test (tests/cli_*.sh) shares: sourced, not
# run (its name keeps it out of the cli_*.sh glob that makes the tests).
#
# cli_start "$@": checks that the script got its two arguments, KDSIM (the kdsim
# program) and SOURCE_DIR (the project's source folder), sets $kdsim to the program's
# absolute path and makes SOURCE_DIR the working folder; a usage error exits 2, a
# folder that cannot be entered exits 1.

cli_start() {
    if [ $# -ne 2 ]; then
        echo "usage: $0 KDSIM SOURCE_DIR" >&2
        exit 2
    fi
    kdsim=$1
    case $kdsim in
    /*) ;;
    *) kdsim=$PWD/$kdsim ;;
    esac
    cd "$2" || exit 1
}
