# SPDX-License-Identifier: Apache-2.0
# The trainers attacked as a hostile user would: every case must end in a
# one-line error with the documented exit status (2: bad flags, data, files
# or checkpoint; 1: divergence), before any training step where the problem
# is visible before training, never in an abort, a hang or a clobbered file.
#   cmake -DPROGRAM=<trainer> -DTRAINER=makemore|gpt|cnn -DCASE=<case> -DWORK=<dir>
#         -DTAMPER=<checkpoint_tamper> -DPTY=<pty_screen> [-DSANITIZED=ON] [-DRUN_TIMEOUT=s]
#         -P attack_check.cmake
# Cases: limits memory data_files bad_checkpoint save_targets same_file
#        vocabulary divergence resume_report output; cnn also data_format
#        export_header
if(NOT RUN_TIMEOUT)
  set(RUN_TIMEOUT 120)  # seconds per trainer run: a run that blocks fails
endif()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
get_filename_component(name "${PROGRAM}" NAME)

# A short run: small model, few steps, no CSV, no samples.
if(TRAINER STREQUAL "gpt")
  set(small --hidden 6 --batch 2 --samples 0 --eval-samples 2 --csv none)
elseif(TRAINER STREQUAL "cnn")
  set(small --hidden 2 --batch 2 --samples 0 --eval-samples 2 --csv none)
else()
  set(small --hidden 4 --batch 2 --samples 0 --eval-samples 2 --csv none)
endif()

# One 8x8 picture line of burtorch-cnn's --data format: class, then 64
# pixels (a stroke of the class's direction, no noise); `classes` classes.
function(picture_line out i classes)
  math(EXPR label "${i} % ${classes}")
  set(line "${label}")
  foreach(p RANGE 63)
    math(EXPR r "${p} / 8")
    math(EXPR c "${p} % 8")
    math(EXPR d "(${r} + ${c}) % 8")
    set(v "0.05")
    if((label EQUAL 0 AND r EQUAL 3) OR (label EQUAL 1 AND c EQUAL 4) OR (label EQUAL 2 AND r EQUAL c)
       OR (label EQUAL 3 AND d EQUAL 7))
      set(v "1")
    endif()
    string(APPEND line ",${v}")
  endforeach()
  set(${out} "${line}" PARENT_SCOPE)
endfunction()

# Data a trainer accepts: a word list (makemore), a text (gpt) or pictures (cnn).
function(write_data path)
  set(text "")
  foreach(i RANGE 60)
    if(TRAINER STREQUAL "cnn")
      picture_line(line ${i} 4)
      string(APPEND text "${line}\n")
    elseif(TRAINER STREQUAL "gpt")
      string(APPEND text "the quick brown fox jumps over the lazy dog number ${i}. ")
    else()
      string(APPEND text "anna\nbob\ncarla\ndmitri\nemma\nfelix\n")
    endif()
  endforeach()
  file(WRITE "${path}" "${text}")
endfunction()

# Runs the trainer; sets rc, out, err in the caller.
macro(run)
  execute_process(COMMAND "${PROGRAM}" ${ARGN} WORKING_DIRECTORY "${WORK}" TIMEOUT ${RUN_TIMEOUT}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
endmacro()

# The trainer must exit with `want` and one stderr line "<name>: ..." matching `regex`;
# with BEFORE_TRAINING, no step line may have been printed.
function(expect label want regex)
  cmake_parse_arguments(E "BEFORE_TRAINING" "" "ARGS" ${ARGN})
  run(${E_ARGS})
  if(NOT "${rc}" STREQUAL "${want}")
    message(FATAL_ERROR "${label}: exit '${rc}', want ${want}\nargs: ${E_ARGS}\nstderr: ${err}")
  endif()
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines lines)
  if(NOT lines EQUAL 1 OR NOT err MATCHES "^${name}: " OR NOT err MATCHES "${regex}")
    message(FATAL_ERROR "${label}: want one line matching '${regex}', got:\n${err}")
  endif()
  if(E_BEFORE_TRAINING AND out MATCHES "step [0-9]+ loss")
    message(FATAL_ERROR "${label}: refused only after training started:\n${out}")
  endif()
  message(STATUS "${label}: ${err}")
endfunction()

function(expect_ok label)
  run(${ARGN})
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${label}: exit '${rc}'\nargs: ${ARGN}\nstderr: ${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

function(expect_content label path want)
  file(READ "${path}" got)
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "${label}: '${path}' was changed")
  endif()
endfunction()

function(expect_kind label path flag)
  execute_process(COMMAND test ${flag} "${path}" RESULT_VARIABLE r)
  if(NOT r EQUAL 0)
    message(FATAL_ERROR "${label}: '${path}' is no longer what it was (test ${flag})")
  endif()
endfunction()

if(CASE STREQUAL "limits")
  # Every limit is checked when the flags are parsed: no allocation, no abort.
  if(TRAINER STREQUAL "gpt")
    set(bad 6000 65532 132 384 390 128 7 0 -6 12x 99999999999999999999)
  elseif(TRAINER STREQUAL "cnn")
    set(bad 0 1 3 129 130 65536 -2 4x 99999999999999999999)
  else()
    set(bad 0 65537 1000000 -1 4x 99999999999999999999)
  endif()
  foreach(h IN LISTS bad)
    expect("--hidden ${h}" 2 "bad value for --hidden" BEFORE_TRAINING ARGS --hidden ${h} --steps 1)
  endforeach()
  expect("--steps past the maximum" 2 "bad value for --steps" ARGS --steps 1000000001)
  if(TRAINER STREQUAL "gpt")
    # The largest supported width trains.
    expect_ok("--hidden 126" --hidden 126 --steps 1 --batch 1 --samples 0 --eval-samples 1 --csv none)
  elseif(TRAINER STREQUAL "cnn")
    expect_ok("--hidden 128" --hidden 128 --steps 1 --batch 1 --samples 0 --eval-samples 1 --csv none)
  endif()

elseif(CASE STREQUAL "memory")
  # More memory than the process may have: a one-line error, never std::bad_alloc.
  if(SANITIZED)
    message("SKIPPED: address space limits do not mix with AddressSanitizer")
    return()
  endif()
  execute_process(COMMAND sh -c "ulimit -v 1500000 && exec \"$0\" \"$@\"" "${PROGRAM}" --hidden 65536
                          --optimizer adam --steps 1 --batch 1 --samples 0 --csv none
                  WORKING_DIRECTORY "${WORK}" TIMEOUT 120 RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "^${name}: (cannot allocate|out of memory)")
    message(FATAL_ERROR "out of address space: exit '${rc}', stderr:\n${err}")
  endif()
  message(STATUS "memory: ${err}")

elseif(CASE STREQUAL "data_files")
  # Inputs that never end or block are refused before anything is read.
  expect("--data /dev/zero" 2 "'/dev/zero' is a character device, not a regular file" BEFORE_TRAINING
         ARGS ${small} --data /dev/zero --steps 1)
  execute_process(COMMAND mkfifo "${WORK}/fifo" RESULT_VARIABLE r)
  if(NOT r EQUAL 0)
    message(FATAL_ERROR "mkfifo failed")
  endif()
  expect("--data FIFO" 2 "'fifo' is a FIFO, not a regular file" BEFORE_TRAINING ARGS ${small} --data fifo --steps 1)
  expect("--resume FIFO" 2 "'fifo' is a FIFO, not a regular file" BEFORE_TRAINING ARGS ${small} --resume fifo --steps 1)
  expect("--data directory" 2 "is a directory" BEFORE_TRAINING ARGS ${small} --data . --steps 1)
  expect("--resume directory" 2 "is a directory" BEFORE_TRAINING ARGS ${small} --resume . --steps 1)
  # More than 16 MiB (a sparse file: no disk space used).
  execute_process(COMMAND truncate -s 16777217 "${WORK}/big.txt" RESULT_VARIABLE r)
  if(NOT r EQUAL 0)
    message(FATAL_ERROR "truncate failed")
  endif()
  expect("--data > 16 MiB" 2 "16777217 bytes; at most 16777216" BEFORE_TRAINING ARGS ${small} --data big.txt --steps 1)

elseif(CASE STREQUAL "bad_checkpoint")
  # Checkpoints with a valid CRC but impossible contents: "bad checkpoint", exit 2.
  expect_ok("train" ${small} --optimizer adam --steps 4 --print-every 2 --save good.ckpt)
  set(adam ${small} --optimizer adam --print-every 2)
  # TRNR layout 2: model_id 0, step 8, optimizer_steps 16, seed 24, rng 32..63, layout 64, vocabulary 72..103.
  set(tampers
      "step_2_63|set TRNR 8 0x8000000000000000|step counter 9223372036854775808"
      "step_huge|set TRNR 8 0xFFFFFFFFFFFFFFFF|step counter 18446744073709551615"
      "optimizer_steps|set TRNR 16 5|optimizer step counter 5 differs"
      "layout|set TRNR 64 7|unknown counters layout 7"
      "parameter_nan|setf64 VALU 0 nan|parameter 0 is not finite"
      "parameter_inf|setf64 VALU -1 -inf|parameter [0-9]+ is not finite"
      "moment_negative|setf64 OPTM -1 -1|optimizer state [0-9]+ is not finite or negative")
  foreach(t IN LISTS tampers)
    string(REPLACE "|" ";" parts "${t}")
    list(GET parts 0 label)
    list(GET parts 1 op)
    list(GET parts 2 regex)
    separate_arguments(op UNIX_COMMAND "${op}")
    execute_process(COMMAND "${TAMPER}" "${WORK}/good.ckpt" "${WORK}/${label}.ckpt" ${op} RESULT_VARIABLE r)
    if(NOT r EQUAL 0)
      message(FATAL_ERROR "checkpoint_tamper ${op} failed")
    endif()
    expect("${label}" 2 "bad checkpoint '${label}.ckpt': ${regex}" BEFORE_TRAINING
           ARGS ${adam} --steps 8 --resume ${label}.ckpt)
  endforeach()
  # The batch generator's state all zero (it would stay zero: every batch the same sample).
  execute_process(COMMAND "${TAMPER}" "${WORK}/good.ckpt" "${WORK}/rng0.ckpt" set TRNR 32 0)
  foreach(at 40 48 56)
    execute_process(COMMAND "${TAMPER}" "${WORK}/rng0.ckpt" "${WORK}/rng0.ckpt" set TRNR ${at} 0)
  endforeach()
  expect("rng_zero" 2 "bad checkpoint 'rng0.ckpt': the batch generator's state is all zero" BEFORE_TRAINING
         ARGS ${adam} --steps 8 --resume rng0.ckpt)
  # A checkpoint at step 4 cannot continue "up to step 2".
  expect("--steps below the checkpoint" 2 "'good.ckpt' is at step 4, past --steps 2" BEFORE_TRAINING
         ARGS ${adam} --steps 2 --resume good.ckpt)
  # The untouched checkpoint resumes: the refusals above are the tampering's.
  expect_ok("good resume" ${adam} --steps 8 --resume good.ckpt)

elseif(CASE STREQUAL "save_targets")
  write_data("${WORK}/data.txt")
  set(args ${small} --data data.txt --steps 4 --print-every 2)
  execute_process(COMMAND mkfifo "${WORK}/fifo")
  expect("--save FIFO" 2 "--save 'fifo' is a FIFO; a checkpoint replaces only a regular file" BEFORE_TRAINING
         ARGS ${args} --save fifo)
  expect_kind("--save FIFO" "${WORK}/fifo" -p)
  expect("--save directory" 2 "is a directory; a checkpoint replaces only a regular file" BEFORE_TRAINING
         ARGS ${args} --save .)
  # A device node (made here, not /dev/null: a wrong rename must not hurt the machine).
  execute_process(COMMAND mknod "${WORK}/null" c 1 3 RESULT_VARIABLE mknod_rc OUTPUT_QUIET ERROR_QUIET)
  if(mknod_rc EQUAL 0)
    expect("--save device" 2 "is a character device; a checkpoint replaces only a regular file" BEFORE_TRAINING
           ARGS ${args} --save null)
    expect_kind("--save device" "${WORK}/null" -c)
  else()
    message(STATUS "mknod not permitted: device-node case not run")
  endif()
  # FILE.tmp a symbolic link to a victim: refused, the victim untouched.
  file(WRITE "${WORK}/victim.txt" "precious\n")
  file(CREATE_LINK "${WORK}/victim.txt" "${WORK}/ck.tmp" SYMBOLIC)
  expect("FILE.tmp is a symlink" 2 "'ck.tmp' \\(the temporary file of --save\\) exists and is a symbolic link"
         BEFORE_TRAINING ARGS ${args} --save ck)
  expect_content("FILE.tmp is a symlink" "${WORK}/victim.txt" "precious\n")
  if(EXISTS "${WORK}/ck")
    message(FATAL_ERROR "FILE.tmp is a symlink: the checkpoint was written anyway")
  endif()
  file(REMOVE "${WORK}/ck.tmp")
  # --save itself a symbolic link: refused (the rename would replace the link, not its target).
  file(CREATE_LINK "${WORK}/victim.txt" "${WORK}/link.ckpt" SYMBOLIC)
  expect("--save symlink" 2 "is a symbolic link" BEFORE_TRAINING ARGS ${args} --save link.ckpt)
  expect_content("--save symlink" "${WORK}/victim.txt" "precious\n")
  # Not writable: found before training.
  expect("--save in a missing directory" 2 "cannot write --save 'no/such/dir/ck'" BEFORE_TRAINING
         ARGS ${args} --save no/such/dir/ck)
  # A stale regular FILE.tmp from an interrupted save is replaced; the save works.
  file(WRITE "${WORK}/ok.ckpt.tmp" "stale")
  expect_ok("stale FILE.tmp" ${args} --save ok.ckpt)
  if(NOT EXISTS "${WORK}/ok.ckpt" OR EXISTS "${WORK}/ok.ckpt.tmp")
    message(FATAL_ERROR "stale FILE.tmp: checkpoint missing or temporary file left")
  endif()
  expect_ok("resume the saved checkpoint" ${small} --data data.txt --steps 6 --print-every 2 --resume ok.ckpt)

elseif(CASE STREQUAL "same_file")
  # No output may be an input: compared by device and inode, not by name.
  write_data("${WORK}/data.txt")
  file(READ "${WORK}/data.txt" data)
  file(CREATE_LINK "${WORK}/data.txt" "${WORK}/hard.txt")
  file(CREATE_LINK "${WORK}/data.txt" "${WORK}/soft.txt" SYMBOLIC)
  set(args --hidden 4 --batch 2 --samples 0 --eval-samples 2 --data data.txt --steps 4 --print-every 2)
  if(TRAINER STREQUAL "gpt")
    set(args --hidden 6 --batch 2 --samples 0 --eval-samples 2 --data data.txt --steps 4 --print-every 2)
  endif()
  expect("--csv = --data" 2 "--csv 'data.txt' is the --data file" BEFORE_TRAINING ARGS ${args} --csv data.txt)
  expect("--csv = ./--data" 2 "--csv './data.txt' is the --data file" BEFORE_TRAINING ARGS ${args} --csv ./data.txt)
  expect("--csv hard link" 2 "--csv 'hard.txt' is the --data file" BEFORE_TRAINING ARGS ${args} --csv hard.txt)
  expect("--csv symlink" 2 "--csv 'soft.txt' is the --data file" BEFORE_TRAINING ARGS ${args} --csv soft.txt)
  expect("--save = --data" 2 "--save 'data.txt' is the --data file" BEFORE_TRAINING
         ARGS ${args} --csv none --save data.txt)
  expect("--plot = --data" 2 "--plot 'data.txt' is the --data file" BEFORE_TRAINING
         ARGS ${args} --csv loss.csv --plot data.txt)
  expect_content("after all of them" "${WORK}/data.txt" "${data}")
  # The checkpoint being resumed is an input too (but --save may replace it).
  expect_ok("train" ${args} --csv none --save r.ckpt)
  file(READ "${WORK}/r.ckpt" ckpt HEX)
  expect("--csv = --resume" 2 "--csv 'r.ckpt' is the --resume checkpoint" BEFORE_TRAINING
         ARGS ${args} --steps 6 --resume r.ckpt --csv r.ckpt)
  file(READ "${WORK}/r.ckpt" ckpt_after HEX)
  if(NOT ckpt STREQUAL ckpt_after)
    message(FATAL_ERROR "--csv = --resume: the checkpoint was changed")
  endif()
  expect_ok("--save = --resume" ${args} --steps 6 --resume r.ckpt --save r.ckpt --csv none)

elseif(CASE STREQUAL "vocabulary")
  # A checkpoint belongs to the characters it was trained on.
  write_data("${WORK}/a.txt")
  file(READ "${WORK}/a.txt" a)
  if(TRAINER STREQUAL "gpt")
    # Same number of distinct characters, one of them different ('z' -> 'Q').
    string(REPLACE "z" "Q" b "${a}")
    file(WRITE "${WORK}/b.txt" "${b}")
    set(args --hidden 6 --batch 2 --samples 0 --eval-samples 2 --csv none --print-every 2)
    expect_ok("train on a.txt" ${args} --data a.txt --steps 4 --save a.ckpt)
    expect("resume on b.txt" 2
           "'a.ckpt' was trained on other characters than 'b.txt'; only in the checkpoint: 'z'; only in the data: 'Q'"
           BEFORE_TRAINING ARGS ${args} --data b.txt --steps 6 --resume a.ckpt)
    # Another number of characters: another model size.
    expect("resume on the generated prose" 2
           "'a.ckpt' is not a checkpoint of this model \\(bad format\\): .*number of distinct characters"
           BEFORE_TRAINING ARGS ${args} --steps 6 --resume a.ckpt)
    expect_ok("resume on a.txt" ${args} --data a.txt --steps 6 --resume a.ckpt)
    # A checkpoint from before the vocabulary was recorded (TRNR layout 1:
    # its first 64 bytes) cannot be checked, so it is refused, clearly.
    execute_process(COMMAND "${TAMPER}" "${WORK}/a.ckpt" "${WORK}/old.ckpt" resize TRNR 64 -)
    expect("layout-1 checkpoint" 2 "'old.ckpt' was saved by an earlier version that did not record the text's characters"
           BEFORE_TRAINING ARGS ${args} --data a.txt --steps 6 --resume old.ckpt)
  elseif(TRAINER STREQUAL "cnn")
    # The classes size the head: a checkpoint of 4 classes does not load
    # into a model of 3, and says what differs.
    set(text "")
    foreach(i RANGE 60)
      picture_line(line ${i} 3)
      string(APPEND text "${line}\n")
    endforeach()
    file(WRITE "${WORK}/b.txt" "${text}")
    set(args --hidden 4 --batch 2 --samples 0 --eval-samples 2 --csv none --print-every 2 --optimizer adam)
    expect_ok("train on a.txt" ${args} --data a.txt --steps 4 --save a.ckpt)
    expect("resume on 3 classes" 2
           "'a.ckpt' is not a checkpoint of this model \\(bad format\\): .*number of classes in the data"
           BEFORE_TRAINING ARGS ${args} --data b.txt --steps 6 --resume a.ckpt)
    # The set of classes follows from their number (in the model id): a
    # layout-1 checkpoint resumes onto the identical curve.
    execute_process(COMMAND "${TAMPER}" "${WORK}/a.ckpt" "${WORK}/old.ckpt" resize TRNR 64 -)
    expect_ok("resume layout 2" ${args} --data a.txt --steps 8 --resume a.ckpt)
    string(REGEX MATCH "step 8 loss [^\n]*" want "${out}")
    expect_ok("resume layout 1" ${args} --data a.txt --steps 8 --resume old.ckpt)
    string(REGEX MATCH "step 8 loss [^\n]*" got "${out}")
    if(want STREQUAL "" OR NOT want STREQUAL got)
      message(FATAL_ERROR "layout-1 resume differs: '${want}' vs '${got}'")
    endif()
  else()
    # makemore's vocabulary is fixed ('.' and a-z): a layout-1 checkpoint
    # still resumes, onto the identical curve.
    set(args --hidden 4 --batch 2 --samples 0 --eval-samples 2 --csv none --print-every 2 --optimizer adam)
    expect_ok("train" ${args} --steps 4 --save new.ckpt)
    execute_process(COMMAND "${TAMPER}" "${WORK}/new.ckpt" "${WORK}/old.ckpt" resize TRNR 64 -)
    expect_ok("resume layout 2" ${args} --steps 8 --resume new.ckpt)
    string(REGEX MATCH "step 8 loss [^\n]*" want "${out}")
    expect_ok("resume layout 1" ${args} --steps 8 --resume old.ckpt)
    string(REGEX MATCH "step 8 loss [^\n]*" got "${out}")
    if(want STREQUAL "" OR NOT want STREQUAL got)
      message(FATAL_ERROR "layout-1 resume differs: '${want}' vs '${got}'")
    endif()
  endif()

elseif(CASE STREQUAL "divergence")
  # A non-finite loss or parameter is reported as such, with its step; exit status 1.
  if(TRAINER STREQUAL "gpt")
    # Far too large a learning rate: diverges within a few steps.
    expect("divergence" 1
           "training diverged at step [1-9][0-9]*: (the loss is|parameter [0-9]+ is) (NaN|[+]inf|-inf)"
           ARGS --optimizer sgd --lr 1000 --steps 40 --print-every 5 --samples 0 --csv none)
  elseif(TRAINER STREQUAL "cnn")
    # As makemore's: the head's biases are the last 4 parameters; class 0's
    # -1e308 and class 1's +1e308 make every picture not of class 1 cost
    # +inf (finite, valid checkpoint; a batch of 8 holds such a picture).
    set(args --hidden 2 --batch 8 --samples 0 --eval-samples 2 --csv none --optimizer sgd --print-every 1)
    expect_ok("train" ${args} --steps 4 --save a.ckpt)
    execute_process(COMMAND "${TAMPER}" "${WORK}/a.ckpt" "${WORK}/b.ckpt" setf64 VALU -4 -1e308)
    execute_process(COMMAND "${TAMPER}" "${WORK}/b.ckpt" "${WORK}/b.ckpt" setf64 VALU -3 1e308)
    expect("divergence" 1 "training diverged at step 5: the loss is [+]inf" ARGS ${args} --steps 8 --resume b.ckpt)
  else()
    # The MLP's loss grows only linearly with the learning rate (tanh and
    # softmax saturate), so start it from a checkpoint whose output biases
    # are finite but huge: b2 of '.' -1e308, of 'a' +1e308 (the last 27
    # parameters are b2). The checkpoint is valid; step 5's loss is +inf.
    set(args ${small} --optimizer sgd --print-every 1)
    expect_ok("train" ${args} --steps 4 --save a.ckpt)
    execute_process(COMMAND "${TAMPER}" "${WORK}/a.ckpt" "${WORK}/b.ckpt" setf64 VALU -27 -1e308)
    execute_process(COMMAND "${TAMPER}" "${WORK}/b.ckpt" "${WORK}/b.ckpt" setf64 VALU -26 1e308)
    expect("divergence" 1 "training diverged at step 5: the loss is [+]inf" ARGS ${args} --steps 8 --resume b.ckpt)
  endif()
  if(err MATCHES ": ok")
    message(FATAL_ERROR "divergence reported as 'ok'")
  endif()

elseif(CASE STREQUAL "resume_report")
  set(args ${small} --optimizer adam --print-every 5)
  list(REMOVE_ITEM args --csv none)  # every case names its own CSV
  expect_ok("fresh run" ${args} --steps 20 --csv c.csv --save r.ckpt)
  if(NOT out MATCHES "\ntrained 20 steps in ")
    message(FATAL_ERROR "fresh run: no 'trained 20 steps in' line:\n${out}")
  endif()
  expect_ok("resume to 30" ${args} --steps 30 --csv c.csv --resume r.ckpt)
  if(NOT out MATCHES "resumed at step 20, trained 10 steps to step 30 in ")
    message(FATAL_ERROR "resume: no 'resumed at step 20, trained 10 steps to step 30' line:\n${out}")
  endif()
  function(expect_csv label path)
    file(STRINGS "${path}" rows)
    string(REPLACE ";" "," want_steps "${ARGN}")
    set(got_steps "")
    list(GET rows 0 head)
    list(REMOVE_AT rows 0)
    foreach(row IN LISTS rows)
      string(REGEX MATCH "^[0-9]+," s "${row}")
      string(REPLACE "," "" s "${s}")
      list(APPEND got_steps "${s}")
    endforeach()
    string(REPLACE ";" "," got_steps "${got_steps}")
    if(NOT head STREQUAL "step,train_loss,val_loss" OR NOT got_steps STREQUAL want_steps)
      message(FATAL_ERROR "${label}: CSV header '${head}', steps ${got_steps}; want one header and steps ${want_steps}")
    endif()
  endfunction()
  expect_csv("resumed CSV" "${WORK}/c.csv" 5 10 15 20 25 30)
  # The validation loss is in the last row of each run (steps 20 and 30).
  file(STRINGS "${WORK}/c.csv" validated REGEX "^[0-9]+,[^,]+,[0-9]")
  list(TRANSFORM validated REPLACE ",.*" "")
  if(NOT validated STREQUAL "20;30")
    message(FATAL_ERROR "resumed CSV: validation losses at steps '${validated}', want 20;30")
  endif()
  # Resuming the step-20 checkpoint again: rows past step 20 are dropped, not duplicated.
  expect_ok("resume again to 40" ${args} --steps 40 --csv c.csv --resume r.ckpt)
  if(NOT out MATCHES "c.csv: dropped 2 rows after step 20")
    message(FATAL_ERROR "resume again: dropped rows not reported:\n${out}")
  endif()
  expect_csv("resumed again" "${WORK}/c.csv" 5 10 15 20 25 30 35 40)
  # A resumed run into a new CSV writes the header.
  expect_ok("resume into a new CSV" ${args} --steps 25 --csv new.csv --resume r.ckpt)
  expect_csv("new CSV" "${WORK}/new.csv" 25)
  # Nothing left to train: said so.
  expect_ok("resume at --steps" ${args} --steps 20 --csv none --resume r.ckpt)
  if(NOT out MATCHES "resumed at step 20, trained 0 steps to step 20 in ")
    message(FATAL_ERROR "resume at --steps:\n${out}")
  endif()
  # A file that is not a loss CSV is not appended to.
  file(WRITE "${WORK}/notes.csv" "my notes\n")
  # A CSV of an earlier version (two columns) is appended to in two columns.
  file(WRITE "${WORK}/old.csv" "step,train_loss\n5,3.1\n10,3.0\n15,2.9\n20,2.8\n25,2.7\n")
  expect_ok("resume into a two-column CSV" ${args} --steps 30 --csv old.csv --resume r.ckpt)
  file(STRINGS "${WORK}/old.csv" old_rows)
  list(LENGTH old_rows old_count)
  list(GET old_rows 6 old_last)
  # Row 25 of the file is past the checkpoint's step 20: dropped, trained again.
  if(NOT old_count EQUAL 7 OR NOT old_last MATCHES "^30,[0-9.e+-]+$")
    message(FATAL_ERROR "two-column CSV: ${old_count} lines, last '${old_last}'; want 7, '30,<loss>'")
  endif()
  expect("resume into a foreign CSV" 2 "does not start with the header 'step,train_loss,val_loss'" BEFORE_TRAINING
         ARGS ${args} --steps 25 --csv notes.csv --resume r.ckpt)
  expect_content("foreign CSV" "${WORK}/notes.csv" "my notes\n")

elseif(CASE STREQUAL "output")
  set(args ${small} --steps 12 --print-every 2 --samples 2)
  # In a pipe or a log (CTest): each step once, on stdout; stderr quiet.
  expect_ok("pipe" ${args})
  if(NOT "${err}" STREQUAL "")
    message(FATAL_ERROR "pipe: stderr is not empty:\n${err}")
  endif()
  string(REGEX MATCHALL "(^|\n)step [0-9]+ loss [^\n ]+\n" lines "${out}")
  string(REGEX MATCHALL "step " mentions "${out}")
  list(LENGTH lines n_lines)
  list(LENGTH mentions n_mentions)
  if(NOT n_lines EQUAL 6 OR NOT n_mentions EQUAL 6)
    message(FATAL_ERROR "pipe: want 6 step lines and no other 'step ' text, got ${n_lines} and ${n_mentions}:\n${out}")
  endif()
  if(TRAINER STREQUAL "makemore" AND NOT out MATCHES "\n  parameters 5963 = 1755 \\+ 1052 \\* 4\n")
    message(FATAL_ERROR "pipe: parameter line:\n${out}")
  endif()
  # On a terminal: the progress line never runs into the step lines.
  execute_process(COMMAND "${PTY}" "${PROGRAM}" ${args} WORKING_DIRECTORY "${WORK}" TIMEOUT 120
                  RESULT_VARIABLE rc OUTPUT_VARIABLE screen)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "terminal: exit '${rc}'\n${screen}")
  endif()
  string(REGEX MATCHALL "(^|\n)step [0-9]+ loss [^\n ]+\n" lines "${screen}")
  string(REGEX MATCHALL "step " mentions "${screen}")
  list(LENGTH lines n_lines)
  list(LENGTH mentions n_mentions)
  if(NOT n_lines EQUAL 6 OR NOT n_mentions EQUAL 6 OR screen MATCHES "samples/s  ETA")
    message(FATAL_ERROR "terminal: want 6 clean step lines and no progress text left, got:\n${screen}")
  endif()
  message(STATUS "terminal screen:\n${screen}")

elseif(CASE STREQUAL "data_format")
  # burtorch-cnn's pictures: every malformed line is named, before training.
  write_data("${WORK}/good.txt")
  file(READ "${WORK}/good.txt" good)
  picture_line(line 1 4)
  set(bad_lines
      "eleven|11${line}|line 2: the class must be an integer from 0 to 9"
      "half|1.5,${line}|line 2: the class must be an integer from 0 to 9"
      "negative|-1,${line}|line 2: the class must be an integer from 0 to 9"
      "short|-|63 pixels"
      "nan|${line}|line 2: pixel 3 is not a number"
      "huge|${line}|line 2: pixel 3 is not a number of magnitude at most 1e6"
      "word|${line}|line 2: pixel 3 is not a number")
  foreach(entry IN LISTS bad_lines)
    string(REPLACE "|" ";" parts "${entry}")
    list(GET parts 0 label)
    list(GET parts 1 bad)
    list(GET parts 2 regex)
    if(label STREQUAL "short")
      string(REGEX REPLACE ",[^,]*$" "" bad "${line}")  # 63 pixels
      set(regex "line 2: 63 pixels; want 64")
    elseif(label STREQUAL "nan")
      string(REGEX REPLACE "^([0-9]+,[^,]+,[^,]+,)[^,]+" "\\1nan" bad "${line}")
    elseif(label STREQUAL "huge")
      string(REGEX REPLACE "^([0-9]+,[^,]+,[^,]+,)[^,]+" "\\11e7" bad "${line}")
    elseif(label STREQUAL "word")
      string(REGEX REPLACE "^([0-9]+,[^,]+,[^,]+,)[^,]+" "\\1bright" bad "${line}")
    endif()
    file(WRITE "${WORK}/${label}.txt" "${line}\n${bad}\n${good}")
    expect("--data ${label}" 2 "'${label}.txt' ${regex}" BEFORE_TRAINING ARGS ${small} --data ${label}.txt --steps 1)
  endforeach()
  file(WRITE "${WORK}/long.txt" "${line},0.5\n")
  expect("65 pixels" 2 "line 1: more than the class and 64 pixels" BEFORE_TRAINING ARGS ${small} --data long.txt --steps 1)
  file(WRITE "${WORK}/few.txt" "${line}\n${line}\n")
  expect("2 pictures" 2 "'few.txt' has 2 pictures; at least 10 are needed" BEFORE_TRAINING
         ARGS ${small} --data few.txt --steps 1)
  set(one "")
  foreach(i RANGE 20)
    picture_line(l 0 4)
    string(APPEND one "${l}\n")
  endforeach()
  file(WRITE "${WORK}/one.txt" "${one}")
  expect("one class" 2 "'one.txt' has one class only" BEFORE_TRAINING ARGS ${small} --data one.txt --steps 1)
  # Blanks, tabs, CRLF and empty lines are fine.
  string(REPLACE "," " \t" spaced "${good}")
  string(REPLACE "\n" "\r\n\n" spaced "${spaced}")
  file(WRITE "${WORK}/spaced.txt" "${spaced}")
  expect_ok("blank-separated, CRLF" ${small} --data spaced.txt --steps 2)
  if(NOT out MATCHES "4 classes, 54 training pictures, 7 validation")
    message(FATAL_ERROR "blank-separated data read wrongly:\n${out}")
  endif()

elseif(CASE STREQUAL "export_header")
  # --export-header is an output like --save: checked before training.
  write_data("${WORK}/data.txt")
  file(READ "${WORK}/data.txt" data)
  set(args ${small} --data data.txt --steps 2 --print-every 1)
  expect("--export-header = --data" 2 "--export-header 'data.txt' is the --data file" BEFORE_TRAINING
         ARGS ${args} --export-header data.txt)
  expect_content("--export-header = --data" "${WORK}/data.txt" "${data}")
  file(WRITE "${WORK}/victim.txt" "precious\n")
  file(CREATE_LINK "${WORK}/victim.txt" "${WORK}/link.hpp" SYMBOLIC)
  expect("--export-header symlink" 2 "--export-header 'link.hpp' is a symbolic link; a header replaces only a regular file"
         BEFORE_TRAINING ARGS ${args} --export-header link.hpp)
  expect_content("--export-header symlink" "${WORK}/victim.txt" "precious\n")
  expect("--export-header in a missing directory" 2 "cannot write --export-header 'no/dir/m.hpp'" BEFORE_TRAINING
         ARGS ${args} --export-header no/dir/m.hpp)
  expect("--export-header = --save" 2 "--export-header 'm.ckpt' is the --save file" BEFORE_TRAINING
         ARGS ${args} --save m.ckpt --export-header m.ckpt)
  execute_process(COMMAND "${PROGRAM}" --help OUTPUT_VARIABLE help)
  if(NOT help MATCHES "--export-header FILE")
    message(FATAL_ERROR "--help does not document --export-header")
  endif()
  # Written: a header naming the run, with both backbones and the head.
  expect_ok("--export-header" ${args} --export-header m.hpp)
  file(READ "${WORK}/m.hpp" header)
  foreach(want "// Trained with: burtorch-cnn --steps 2 --batch 2 --hidden 2 --optimizer adam --lr 0.01 --seed 42 --lanes [0-9]+ --data data.txt"
               "constexpr unsigned kConv1 = 1U;" "constexpr unsigned kConv2 = 2U;" "constexpr unsigned kClasses = 4U;"
               "constexpr std::int8_t kConv1WeightI8\\[9\\]" "constexpr std::uint16_t kConv2WeightF16\\[18\\]"
               "constexpr float kHeadWeight\\[8\\]" "constexpr float kHeadBias\\[4\\]")
    if(NOT header MATCHES "${want}")
      message(FATAL_ERROR "--export-header: no '${want}' in:\n${header}")
    endif()
  endforeach()

else()
  message(FATAL_ERROR "unknown CASE '${CASE}'")
endif()
