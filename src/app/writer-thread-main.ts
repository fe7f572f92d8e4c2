import { runWriterThread } from '../buffer/writer-thread-main.js';
import { writerTasks } from './writer-tasks.js';

runWriterThread(writerTasks);
