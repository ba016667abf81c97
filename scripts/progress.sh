# Progress of a long script on a terminal: runs done of the total, time
# elapsed and an estimate of the time left, rewritten in place on stderr.
# Quiet when stderr is not a terminal (CI, logs) unless PAPSHIM_PROGRESS=1;
# PAPSHIM_PROGRESS=0 silences it everywhere.  Sourced, not run:
#   source scripts/progress.sh
#   progress_start 24            # the number of runs to come
#   progress_step "allreduce prr 50 ms"   # before each run
#   progress_clear                 # before printing other lines
#   progress_end
_progress_on=0 _progress_total=0 _progress_done=0 _progress_t0=0

_progress_clock() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

progress_start() {
  _progress_total=$1 _progress_done=0 _progress_t0=$SECONDS
  case ${PAPSHIM_PROGRESS:-} in
    1) _progress_on=1 ;;
    0) _progress_on=0 ;;
    *) if [[ -t 2 ]]; then _progress_on=1; else _progress_on=0; fi ;;
  esac
}

progress_step() {
  ((_progress_on)) || { _progress_done=$((_progress_done + 1)); return 0; }
  local elapsed=$((SECONDS - _progress_t0)) left="?"
  if ((_progress_done > 0 && _progress_total >= _progress_done)); then
    left="about $(_progress_clock $((elapsed * (_progress_total - _progress_done) / _progress_done)))"
  fi
  printf '\r\033[K[%d/%d] %s elapsed, %s left: %s' $((_progress_done + 1)) "$_progress_total" \
    "$(_progress_clock "$elapsed")" "$left" "$1" >&2
  _progress_done=$((_progress_done + 1))
}

# Clears the line (before printing something else on the terminal).
progress_clear() {
  ((_progress_on)) || return 0
  printf '\r\033[K' >&2
}

progress_end() {
  ((_progress_on)) || return 0
  printf '\r\033[K%d runs in %s\n' "$_progress_done" "$(_progress_clock $((SECONDS - _progress_t0)))" >&2
}
