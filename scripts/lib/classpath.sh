# Sourced by bin/sparkgpu and notebooks/kernel/start-kernel.sh: the run-time class path of a built checkout,
# relocatable.
#
# spark-jobs/target/classpath.txt (written by the build) holds absolute paths: the project's own module jars
# under the directory the build ran in, and dependencies in the local Maven repository. A checkout that was
# moved or copied after its build must not run the ORIGINAL tree's jars (or fail when that tree is gone), so
# module jars are resolved against the checkout the script runs from, whatever directory the build ran in.
#
#   sparkgpu_classpath ROOT CP_FILE   prints the class path (':'-separated) on stdout; returns 1, naming the
#                                     first missing jar on stderr, when an entry does not exist (the caller
#                                     rebuilds or fails with the build command)
sparkgpu_classpath() {
  local root="$1" cp_file="$2" entry out="" module rest
  local IFS=':'
  # shellcheck disable=SC2013
  for entry in $(cat "$cp_file"); do
    [ -n "$entry" ] || continue
    case "$entry" in
      */native-kernels/target/*|*/spark-gpu/target/*|*/spark-jobs/target/*)
        rest="${entry%/target/*}"
        module="${rest##*/}"
        entry="$root/$module/target/${entry##*/target/}"
        ;;
    esac
    if [ ! -e "$entry" ]; then
      echo "class path entry missing: $entry" >&2
      return 1
    fi
    out="${out:+$out:}$entry"
  done
  printf '%s\n' "$out"
}
