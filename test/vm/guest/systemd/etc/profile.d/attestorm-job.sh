# The VM test bed (test/vm in attestorm): tester's autologin on the serial console runs the host's job,
# through sudo (placement "session") or as tester itself (placement "user"), then powers the guest off.
if [ "$(id -u)" = 1000 ] && [ "$(tty)" = /dev/ttyS0 ]; then
  case " $(cat /proc/cmdline) " in
    *" attestorm.placement=session "*) sudo /usr/local/bin/attestorm-job; sudo systemctl poweroff --force --force ;;
    *" attestorm.placement=user "*) /usr/local/bin/attestorm-job; sudo systemctl poweroff --force --force ;;
  esac
fi
